"""How one private vote reads against a story: the true endpoint, the decoy, UNKNOWN, another
container, cut off by the token budget (truncated), or no readable vote at all (failed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from backchannel.analysis import decode_json

VOTE_KINDS = ("true", "decoy", "unknown", "other", "truncated", "failed")
ABSENT = ("truncated", "failed")
"""Kinds that are no answer: they never count towards a majority."""


def vote_kind(value: object, endpoint: str, decoy: str, status: str = "ok") -> str:
    """true, decoy, unknown, other, truncated (the answer hit the vote's token budget) or
    failed (no readable vote: a parse failure, a refusal, an error, or no vote at all)."""
    if status == "truncated":
        return "truncated"
    if not isinstance(value, str):
        return "failed"
    if value == endpoint:
        return "true"
    if value == decoy:
        return "decoy"
    if value == "UNKNOWN":
        return "unknown"
    return "other"


def vote_kinds(
    values: pd.Series, statuses: pd.Series, endpoints: np.ndarray, decoys: np.ndarray
) -> np.ndarray:
    """`vote_kind` of many votes at once, as indices into VOTE_KINDS: the stored JSON `values`
    (each distinct text decoded once), their `statuses`, and each vote's story."""
    codes, texts = pd.factorize(values, use_na_sentinel=True)
    decoded = np.empty(len(texts) + 1, dtype=object)  # the last one: no value (code -1)
    decoded[:-1] = [decode_json(t) for t in texts]
    vote = decoded[codes]
    status = statuses.astype(str).to_numpy()
    # Whether each distinct value is a text, asked once per value rather than once per vote.
    text = np.array([isinstance(v, str) for v in decoded], dtype=bool)
    readable = (status == "ok") & text[codes]
    kinds = np.select(
        [status == "truncated", ~readable, vote == endpoints, vote == decoys, vote == "UNKNOWN"],
        [VOTE_KINDS.index(k) for k in ("truncated", "failed", "true", "decoy", "unknown")],
        default=VOTE_KINDS.index("other"),
    )
    return kinds.astype(np.int64)
