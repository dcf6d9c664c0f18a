"""How stored votes read against a story, one at a time and as arrays (the same answers)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from backchannel.paradigms.testimony import vote_kind
from backchannel.paradigms.testimony._votes import VOTE_KINDS, vote_kinds

# (stored value, status, endpoint, decoy) -> the kind worked out by hand.
CASES = [
    (json.dumps("red"), "ok", "red", "blue", "true"),
    (json.dumps("blue"), "ok", "red", "blue", "decoy"),
    (json.dumps("UNKNOWN"), "ok", "red", "blue", "unknown"),
    (json.dumps("green"), "ok", "red", "blue", "other"),
    (json.dumps("blue"), "ok", "blue", "red", "true"),  # another story: its own endpoint
    (json.dumps("red"), "truncated", "red", "blue", "truncated"),  # cut off: never an answer
    (None, "truncated", "red", "blue", "truncated"),
    (json.dumps("red"), "parse_failure", "red", "blue", "failed"),  # not ok: no vote
    (None, "ok", "red", "blue", "failed"),
    (json.dumps(3), "ok", "red", "blue", "failed"),  # not a container name
    (json.dumps(["red"]), "ok", "red", "blue", "failed"),
]


def test_vote_kinds_read_each_vote_as_vote_kind_does() -> None:
    values = pd.Series([c[0] for c in CASES], dtype=object)
    statuses = pd.Series([c[1] for c in CASES])
    endpoints = np.array([c[2] for c in CASES], dtype=object)
    decoys = np.array([c[3] for c in CASES], dtype=object)
    found = [VOTE_KINDS[k] for k in vote_kinds(values, statuses, endpoints, decoys)]
    assert found == [c[4] for c in CASES]
    one_by_one = [
        vote_kind(None if v is None or s != "ok" else json.loads(v), e, d, s)
        for v, s, e, d, _ in CASES
    ]
    assert found == one_by_one


def test_vote_kinds_of_no_votes() -> None:
    none = np.array([], dtype=object)
    assert (
        vote_kinds(pd.Series([], dtype=object), pd.Series([], dtype=object), none, none).size == 0
    )
