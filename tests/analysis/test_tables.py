"""The one extraction layer: decoded values and meta, the done filter, and JSON sanitising."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    RunTables,
    decode_json,
    finite_or_none,
    jsonable,
)


def event(cid: str, seq: int, kind: str, value: Any, meta: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(EVENT_COLUMNS)
    row.update(conversation_id=cid, seq=seq, kind=kind, name=kind, channel="private",
               value=None if value is None else json.dumps(value), meta=json.dumps(meta),
               status="ok", text="")  # fmt: skip
    return row


def conversation(cid: str, status: str, meta: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(CONVERSATION_BASE_COLUMNS)
    row.update(conversation_id=cid, status=status, meta=json.dumps(meta))
    return row


def tables() -> RunTables:
    events = [
        event("a", 0, "rating", 4, {"x": 1}),
        event("a", 1, "ranking", {"ranking": ["p", "q"]}, {}),
        event("a", 2, "rating", None, {}),
        event("b", 0, "rating", 2, {}),
    ]
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS).astype({"value": "str", "meta": "str"}),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame(
            [conversation("a", "done", {"rounds": 3}), conversation("b", "failed", {})],
            columns=CONVERSATION_BASE_COLUMNS,
        ),
    )


def test_events_of_decode_values_and_meta_and_keep_finished_conversations() -> None:
    ratings = tables().events_of(kind="rating")
    assert ratings["seq"].tolist() == [0, 2]  # b failed
    first, missing = ratings["value"].tolist()
    assert first == 4 and isinstance(first, int) and missing is None  # an int stays an int
    assert ratings["meta"].tolist() == [{"x": 1}, {}]
    every = tables().events_of(kind="rating", done=False)
    assert every["conversation_id"].tolist() == ["a", "a", "b"]
    (ranking,) = tables().events_of(name=["ranking"])["value"]
    assert ranking == {"ranking": ["p", "q"]}
    # the stored tables are left as JSON text
    assert tables().events["value"].iloc[0] == "4"


def test_done_conversations_have_their_meta_decoded() -> None:
    done = tables().done_conversations()
    assert done["conversation_id"].tolist() == ["a"] and done["meta"].tolist() == [{"rounds": 3}]


def test_done_core_events_keep_the_finished_conversations_events() -> None:
    run = tables()
    done = run.done_core_events()
    assert done["conversation_id"].tolist() == ["a", "a", "a"]  # b failed
    assert done.columns.equals(run.core_events.columns)


def test_done_core_events_when_all_finished_are_every_event_and_safe_to_change() -> None:
    run = tables()
    run.conversations.loc[1, "status"] = "done"
    with run.reuse():
        done = run.done_core_events()
        assert done["seq"].tolist() == [0, 1, 2, 0]
        done["seq"] = -1  # a caller's change stays its own
        assert run.done_core_events()["seq"].tolist() == [0, 1, 2, 0]
    assert run.core_events["seq"].tolist() == [0, 1, 2, 0]


def test_conversations_that_stored_the_same_meta_each_get_their_own_dict() -> None:
    meta = {"story": {"chain": [1, 2]}, "k": 1}
    run = RunTables(
        pd.DataFrame(columns=EVENT_COLUMNS),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame(
            [conversation(c, "done", meta) for c in ("a", "b")]
            + [conversation("c", "done", {"k": 2})],
            columns=CONVERSATION_BASE_COLUMNS,
        ),
    )
    first, second, third = run.done_conversations()["meta"].tolist()
    assert first == second == meta and third == {"k": 2}
    first["k"] = 9  # a row's own dict: changing it leaves the other conversation's alone
    assert second["k"] == 1


def test_labels_for_keep_one_judges_labels_and_a_callers_change_stays_its_own() -> None:
    labels = pd.DataFrame(
        [("a", 0, "rule", "x"), ("a", 0, "llm", "y"), ("a", 1, "rule", "z")],
        columns=["conversation_id", "event_seq", "judge", "label"],
    )
    run = RunTables(pd.DataFrame(columns=EVENT_COLUMNS), labels, pd.DataFrame())
    with run.reuse():
        assert run.labels_for("rule")["label"].tolist() == ["x", "z"]
        assert run.labels_for("llm")["label"].tolist() == ["y"]
        assert run.labels_for("none").empty
    only = RunTables(pd.DataFrame(columns=EVENT_COLUMNS), labels.iloc[[0, 2]], pd.DataFrame())
    with only.reuse():
        mine = only.labels_for("rule")
        assert mine["label"].tolist() == ["x", "z"]
        mine["label"] = "changed"
        assert only.labels_for("rule")["label"].tolist() == ["x", "z"]
    assert only.labels["label"].tolist() == ["x", "z"]


def test_decode_json_reads_text_and_passes_decoded_values_through() -> None:
    assert decode_json('{"a": [1, 2]}') == {"a": [1, 2]}
    assert decode_json(None) is None and decode_json("") is None and decode_json(math.nan) is None
    assert decode_json({"already": True}) == {"already": True}


def test_jsonable_gives_strict_json() -> None:
    frame = pd.DataFrame({"n": np.array([1, 2]), "x": [0.5, np.nan]})
    value = {1: frame, "t": (np.float64(np.inf), np.bool_(True), pd.NA), "a": np.array([3])}
    assert jsonable(value) == {
        "1": [{"n": 1, "x": 0.5}, {"n": 2, "x": None}],
        "t": [None, True, None],
        "a": [3],
    }
    json.dumps(jsonable(value), allow_nan=False)
    assert finite_or_none(-math.inf) is None and finite_or_none(2) == 2.0


def test_inside_reuse_an_extraction_is_built_once_and_dropped_after() -> None:
    run = tables()
    calls: list[int] = []

    def build() -> int:
        calls.append(1)
        return len(calls)

    assert run.memo("k", build) == 1 and run.memo("k", build) == 2  # outside: every time
    with run.reuse():
        with run.reuse():  # nested blocks share one memo
            assert run.memo("k", build) == 3
        assert run.memo("k", build) == 3
        first = run.done_conversations()
        first.loc[0, "status"] = "changed"  # a caller's copy, not the kept frame
        assert run.done_conversations().loc[0, "status"] == "done"
    assert run.memo("k", build) == 4  # the block ended: nothing kept


def test_events_of_inside_reuse_gives_the_same_frames_as_outside() -> None:
    run = tables()
    outside = run.events_of(kind="rating")
    with run.reuse():
        inside = [run.events_of(kind="rating") for _ in range(2)]
    for frame in inside:
        pd.testing.assert_frame_equal(frame, outside)


def test_event_meta_is_loaded_on_first_use_of_events() -> None:
    full = tables().events
    asked: list[int] = []

    def meta(events: pd.DataFrame) -> pd.Series:
        asked.append(len(events))
        return full["meta"].set_axis(events.index)

    lazy = RunTables(
        full.drop(columns="meta"), tables().labels, tables().conversations, event_meta=meta
    )
    assert "meta" not in lazy.core_events.columns and not asked
    assert lazy.done_events().tolist() == [True, True, True, False]  # no meta needed
    assert not asked
    pd.testing.assert_frame_equal(lazy.events, full)
    assert asked == [4] and list(lazy.core_events.columns) == EVENT_COLUMNS
    assert len(lazy.events) == 4  # read once only
    assert asked == [4]
