"""Peer pressure's integer keys: conversation codes and each event's latest label of a judge."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from backchannel.analysis import EVENT_COLUMNS, RunTables
from backchannel.paradigms.peer_pressure._base import (
    _labelled,
    conversation_codes,
    join_keys,
    latest_labels,
    merge_coded,
    text_codes,
)


def _tables(labels: Sequence[tuple[str, int, object, str]]) -> RunTables:
    conversations = pd.DataFrame(
        {"conversation_id": ["c1", "c2", "c3"], "status": ["done"] * 3}, dtype=object
    )
    columns = ["conversation_id", "event_seq", "label", "status"]
    frame = pd.DataFrame(  # object columns: a None label stays None, not NaN
        {name: [row[i] for row in labels] for i, name in enumerate(columns)}, dtype=object
    ).assign(judge="rule")
    return RunTables(pd.DataFrame(columns=EVENT_COLUMNS), frame, conversations)


def test_codes_are_positions_among_the_conversations_matched_as_text() -> None:
    run = _tables([])
    ids = pd.Series(["c3", "c9", "c1", None], dtype=object)
    assert conversation_codes(run, ids).tolist() == [2, -1, 0, -1]
    assert text_codes(pd.Series(["b", "a", "b"], dtype="str"), pd.Index(["a", "b"])).tolist() == [
        1,
        0,
        1,
    ]


# Labels in stored order: c1/0 ok then failed; c1/1 ok then None; c2/0 ok then NaN;
# c2/1 failed; c9/0 a conversation the run does not have.
LABELS = [
    ("c1", 0, "true", "ok"),
    ("c1", 0, "reject", "parse_failure"),
    ("c1", 1, "endorse", "ok"),
    ("c1", 1, None, "ok"),
    ("c2", 0, "true", "ok"),
    ("c2", 0, float("nan"), "ok"),
    ("c2", 1, "hedge", "parse_failure"),
    ("c9", 0, "true", "ok"),
]


def test_the_latest_label_under_each_rule() -> None:
    run = _tables(LABELS)
    conversation = np.array([0, 0, 1, 1, 2, 0, -1])
    seq = np.array([0, 1, 0, 1, 0, 7, 0])
    # c1/0, c1/1, c2/0, c2/1, c3/0 (no label), c1/7 (no label), an unknown conversation
    assert latest_labels(run, "rule", conversation, seq, "any").tolist() == [
        1,
        3,
        5,
        6,
        -1,
        -1,
        -1,
    ]
    assert latest_labels(run, "rule", conversation, seq, "ok").tolist() == [0, 3, 5, -1, -1, -1, -1]
    assert latest_labels(run, "rule", conversation, seq, "ok_named").tolist() == [
        0,
        2,
        5,
        -1,
        -1,
        -1,
        -1,
    ]
    assert latest_labels(run, "other", conversation, seq, "any").tolist() == [-1] * 7


def test_labelled_events_take_the_latest_label_and_judge_it() -> None:
    run = _tables(LABELS)
    events = pd.DataFrame(
        {
            "conversation_id": ["c1", "c1", "c2", "c2", "c3"],
            "seq": [0, 1, 0, 1, 0],
            "status": ["ok", "ok", "ok", "ok", "failed"],
        },
        index=[10, 11, 12, 13, 14],
    )
    labelled = _labelled(run, "rule", events)
    assert labelled.index.tolist() == [0, 1, 2, 3, 4]
    assert labelled["label_status"].tolist()[:4] == ["parse_failure", "ok", "ok", "parse_failure"]
    assert labelled["label"].iloc[0] == "reject" and labelled["label"].iloc[3] == "hedge"
    assert labelled["label"].iloc[[1, 2, 4]].isna().all()
    # The latest label of c1/0 failed, c1/1 and c2/0 have no value, c3/0 failed and has none.
    assert labelled["valid"].tolist() == [False, False, False, False, False]
    ok = _labelled(_tables([("c1", 0, "true", "ok")]), "rule", events)
    assert ok["valid"].tolist() == [True, False, False, False, False]


def test_join_keys_are_equal_exactly_where_the_values_are() -> None:
    left = pd.DataFrame({"c": ["a", "a", "b", None], "r": [1, 2, 1, 1]}, dtype=object)
    right = pd.DataFrame({"c": ["b", "a", None, "a"], "r": [1, 2, 1, 1]}, dtype=object)
    lk, rk = join_keys(left, right, ["c", "r"])
    # left a/1 = right a/1 (row 3), a/2 = row 1, b/1 = row 0, missing/1 = missing/1 (row 2)
    assert [rk.tolist().index(k) for k in lk.tolist()] == [3, 1, 0, 2]
    assert len(set(rk.tolist())) == 4


def test_a_coded_merge_is_the_merge() -> None:
    left = pd.DataFrame(
        {"c": ["b", "a", "a", "c"], "r": [1, 1, 2, 1], "x": [10, 11, 12, 13]}, index=[5, 6, 7, 8]
    )
    right = pd.DataFrame({"r": [1, 1, 2], "c": ["a", "a", "c"], "y": ["p", "q", "s"]})
    inner = merge_coded(left, right, ["c", "r"], "inner")
    # a/1 matches two right rows (in their order); a/2 and b/1 none; c/1 none (right has c/2)
    assert inner.to_dict(orient="list") == {
        "c": ["a", "a"],
        "r": [1, 1],
        "x": [11, 11],
        "y": ["p", "q"],
    }
    outer = merge_coded(left, right, ["c", "r"], "left")
    assert outer["y"].tolist()[1:3] == ["p", "q"] and outer["y"].isna().sum() == 3
    for how in ("inner", "left"):
        pd.testing.assert_frame_equal(
            merge_coded(left, right, ["c", "r"], how), left.merge(right, on=["c", "r"], how=how)
        )


def _run_of(conversations: pd.DataFrame, factors: list[str]) -> RunTables:
    frame = conversations.assign(status="done", item_id="q", replicate=0, meta="{}")
    return RunTables(
        pd.DataFrame(columns=EVENT_COLUMNS),
        pd.DataFrame(columns=["conversation_id", "event_seq", "label", "status", "judge"]),
        frame,
        {"factors": factors},
    )


def test_done_conversations_read_each_distinct_cell_once_with_the_same_levels() -> None:
    import json

    from _reference import done_levels

    from backchannel.paradigms.peer_pressure._base import _distinct_rows, _done_conversations

    listed = json.dumps({"models": ["a", "b"], "k": 1})
    base = pd.DataFrame(
        {
            "conversation_id": [f"c{i}" for i in range(6)],
            "cell": [listed, listed, json.dumps({"k": 2}), None, json.dumps({"k": 2}), listed],
            "share": [0.5, -0.0, 0.0, float("nan"), 0.0, 0.0],  # not in every cell: the column
            "k": [1, 1, 2, 3, 2, 1],
            "models": ["a,b", "a,b", "c", "c", "c", "a,b"],  # the cell's list where it has one
        }
    ).astype({"conversation_id": "str", "cell": "str", "models": "str"})
    factors = ["models", "k", "share"]
    cases = {
        "typed": base,
        "object column": base.astype({"share": object}),  # read per conversation
        "repeated id": base.assign(conversation_id=["c0", "c0", "c1", "c2", "c3", "c4"]),
        "no cell": base.drop(columns=["cell"]),
    }
    for name, frame in cases.items():
        tables = _run_of(frame, factors)
        got, want = _done_conversations(tables), done_levels(tables)
        pd.testing.assert_frame_equal(got, want, obj=name)
        assert [repr(v) for v in got["share"]] == [repr(v) for v in want["share"]], name
    # -0.0 and 0.0 are told apart, NaN rows are one; a list level is one object per cell
    first, row = _distinct_rows(base, ["cell", *factors])
    assert row.tolist()[1] != row.tolist()[5] and len(first) == 5
    got = _done_conversations(_run_of(base, factors))
    assert got["models"].iloc[0] is got["models"].iloc[5]
    assert _distinct_rows(base.astype({"k": "Int64"}), ["k"]) is None
    # A categorical column (the store's names) is told apart by its codes, NaN rows as one.
    coded = base.astype({"models": "category", "cell": "category"})
    assert [x.tolist() for x in _distinct_rows(coded, ["cell", "models"]) or ()] == [
        x.tolist() for x in _distinct_rows(base, ["cell", "models"]) or ()
    ]
