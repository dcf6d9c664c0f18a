"""Earlier, row-by-row forms of analysis functions since rewritten column-at-a-time: the
tests check the current ones give exactly what these give."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import (
    Design,
    Divergence,
    DivergenceRow,
    DivergenceTest,
    cell_groups,
    check_stance_pairs,
    classify_pairs,
    clustered_proportion_ci,
    texts_in,
)
from backchannel.analysis._divergence import (
    INTERVAL_METHOD,
    MEASURES,
    TESTED,
    _record,
    compared_cells,
)


# divergence ---------------------------------------------------------------------------------
def divergence(
    pairs: pd.DataFrame,
    design: Design,
    conversations: pd.DataFrame,
    *,
    confidence: float = 0.95,
) -> Divergence:
    """`analysis.divergence` as it was: each cell's rows taken whole, each measure's interval
    factorizing its conversation ids again, per-conversation shares by group-by."""
    check_stance_pairs(pairs)
    known = set(conversations["conversation_id"].astype(str))
    pairs = pairs[texts_in(pairs["conversation_id"], known)].reset_index(drop=True)
    pairs = pairs.assign(conversation_id=pairs["conversation_id"].astype(str))
    levels = design.levels(conversations)
    measures = classify_pairs(pairs)
    frame = pairs.drop(columns=["agree"]).join(measures)
    rows: list[DivergenceRow] = []
    keys = design.by(extra=["round", "role"])
    for cell, group in cell_groups(frame, keys, levels):
        classified = group[group["skipped"].isna()]
        reasons = group["skipped"].dropna().astype(str).value_counts()
        values: dict[str, Any] = {}
        counts: dict[str, int] = {}
        for name in MEASURES:
            flags = classified[name].astype(bool).to_numpy()
            counts[name] = int(flags.sum())
            interval = clustered_proportion_ci(
                flags, classified["conversation_id"].to_numpy(), confidence=confidence
            )
            values[name] = _record(interval)
        rows.append(
            DivergenceRow.model_validate(
                {
                    **cell,
                    "round": int(cell["round"]),
                    "role": str(cell["role"]),
                    "pairs": len(group),
                    "n": len(classified),
                    "conversations": int(classified["conversation_id"].nunique()),
                    "skipped": {str(k): int(v) for k, v in sorted(reasons.items())},
                    "counts": counts,
                    **values,
                }
            )
        )
    return Divergence(
        interval=INTERVAL_METHOD,
        by_cell=rows,
        tests=_tests(frame, design, conversations, levels),
    )


def _tests(
    frame: pd.DataFrame,
    design: Design,
    conversations: pd.DataFrame,
    levels: dict[str, dict[str, Any]],
) -> list[DivergenceTest]:
    factors = list(design.factors)
    if not factors:
        return []
    units = conversations.assign(conversation_id=conversations["conversation_id"].astype(str))
    units = units.reset_index(drop=True)
    cells = cell_groups(units, factors, levels)
    keys_of = [_unit_keys(group) for _, group in cells]
    places = [
        _places(group, keys is not None) for (_, group), keys in zip(cells, keys_of, strict=True)
    ]
    classified = frame[frame["skipped"].isna()]
    flags = classified.assign(
        **{name: classified[name].astype(bool).astype(float) for name in TESTED}
    )
    ids = units["conversation_id"].tolist()
    per_conversation = {
        (str(role), name): flags[flags["role"] == role]
        .groupby("conversation_id")[name]
        .mean()
        .reindex(ids)
        .to_numpy(dtype=float)
        for role in sorted(frame["role"].astype(str).unique())
        for name in TESTED
    }
    return compared_cells(
        cells,
        factors,
        places,
        per_conversation,
        lambda i, j: keys_of[i] is not None and keys_of[i] == keys_of[j],
    )


def _unit_keys(group: pd.DataFrame) -> tuple[tuple[str, int], ...] | None:
    keys = sorted(zip(group["item_id"].astype(str), group["replicate"].astype(int), strict=True))
    return tuple(keys) if len(set(keys)) == len(keys) else None


def _places(group: pd.DataFrame, pairable: bool) -> dict[bool, np.ndarray]:
    rows = group.index.to_numpy(dtype=np.int64)
    places = {False: rows}
    if pairable:
        items = [str(item) for item in group["item_id"].tolist()]
        replicates = [int(r) for r in group["replicate"].tolist()]
        order = sorted(range(len(rows)), key=lambda i: (items[i], replicates[i]))
        places[True] = rows[np.asarray(order, dtype=np.int64)]
    return places


# influence ----------------------------------------------------------------------------------
def transitions(frame: pd.DataFrame, channel: str) -> pd.DataFrame:
    """`analysis._influence.transitions` as it was: grouped by the two text columns."""
    data = frame.sort_values(["conversation_id", "agent", "round"]).reset_index(drop=True)
    values = pd.to_numeric(data[channel], errors="coerce").astype(float)
    keys = [data["conversation_id"].astype(str), data["agent"].astype(str)]
    rounds = data["round"].astype(int)
    previous = values.groupby(keys).shift(1)
    previous_round = rounds.groupby(keys).shift(1)
    previous = previous.where(previous_round == rounds - 1)
    initial = values.where(rounds == 0).groupby(keys).transform("max")
    out = data[["conversation_id", "agent", "round"]].copy()
    out["agent_model"] = data["model"].astype(str)
    out["y"] = values
    out["previous"] = previous
    out["initial"] = initial
    out["neighbours"] = pd.to_numeric(data[f"neighbours_{channel}"], errors="coerce")
    return out[rounds >= 1].reset_index(drop=True)
