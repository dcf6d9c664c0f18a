"""The records of a run, built a column at a time, on a hand-built run whose records are worked
out below, and against the one-event-at-a-time reference on the lineage runs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._citations import Claim
from backchannel.paradigms.testimony._graph import Record, records

from ._lineage_run import conversation, tables
from ._reference import records_by_event

C1 = conversation(
    "s1",
    "C1",
    {("A", "R1"): "blue_box [T:K]", ("B", "R1"): "?", ("A", "R2"): "red_box [S:B@R1]"},
    {("A", "R1"): "t", ("A", "R2"): "x"},
    failed={("B", "R1")},
)
C0 = conversation("s2", "C0", {("C", "R1"): "red_box [T:S]"}, {("C", "T0"): "d"})


def _edited() -> RunTables:
    """The two conversations with, by hand: the events of s2 stored first and s1's in reverse
    order, then A's R1 vote of s1 asked again (green_box; the one stored later wins); B's R1
    statement labelled twice (the later label, ok with no claims, wins); C's R1 statement of
    s2 unlabelled; and a third conversation without an endpoint (no record). Seqs run on
    across the run: s1 has testimonies 0-4, statements 5-7, votes 8-9; s2 10-14, 15, 16."""
    base = tables(C1, C0)
    events = base.events.drop(columns="meta")
    s1 = events["conversation_id"].str.contains("s1")
    again = events[s1 & (events["seq"] == 8)].copy()
    again["seq"], again["value"] = 99, '"green_box"'
    events = pd.concat([events[~s1], events[s1].iloc[::-1], again], ignore_index=True)
    labels = base.labels
    b_seq, c_seq = 6, 15
    relabel = labels[labels["event_seq"] == b_seq].head(1).copy()
    relabel["label"] = json.dumps({"claims": [], "invalid": []})
    relabel["status"], relabel["text"] = "ok", ""
    labels = pd.concat(
        [
            labels[
                ~(labels["conversation_id"].str.contains("s2") & (labels["event_seq"] == c_seq))
            ],
            relabel,
        ],
        ignore_index=True,
    )
    conversations = base.conversations
    extra = conversations.iloc[[0]].copy()
    extra["conversation_id"], extra["meta"] = "other", json.dumps({"rounds": 3})
    return RunTables(events, labels, pd.concat([conversations, extra], ignore_index=True))


def test_records_read_a_hand_built_run() -> None:
    found = records(_edited(), "citations")
    assert [r.conversation_id for r in found] == ["condition=C1/s1/0", "condition=C0/s2/0"]
    s1, s2 = found
    assert s1.testimony == {"C": 4, "B": 3, "A": 2, "S": 1, "K": 0}  # in stored order
    # Stored in reverse, the statements still come in (round, seq) order.
    assert [(s.agent, s.phase, s.seq) for s in s1.statements] == [
        ("A", "R1", 5),
        ("B", "R1", 6),
        ("A", "R2", 7),
    ]
    a1, b1, a2 = s1.statements
    assert a1.extraction is not None and a1.extraction.claims == (
        Claim("testimony", "K", None, "blue_box"),
    )
    assert (a1.status, a1.text, a1.said, a1.role, a1.number) == (
        "ok",
        "",
        "blue_box [T:K]",
        "member",
        2,
    )
    # B's later label (ok, no claims) replaces the parse failure.
    assert b1.extraction is not None and (b1.status, b1.extraction.claims) == ("ok", ())
    assert a2.extraction is not None and a2.extraction.claims[0].source == "B"
    # A's R2 vote failed to parse (None); its R1 vote was asked again at seq 99: green_box.
    assert s1.votes == {("A", 4): None, ("A", 2): "green_box"}  # in stored order
    (c1,) = s2.statements
    assert (c1.extraction, c1.status, c1.text) == (None, "not_labelled", "")
    assert s2.votes == {("C", 0): "blue_box"} and s2.testimony["S"] == 11


def _same(a: list[Record], b: list[Record]) -> None:
    assert a == b
    for x, y in zip(a, b, strict=True):  # the same keys in the same order
        assert list(x.testimony) == list(y.testimony) and list(x.votes) == list(y.votes)


@pytest.mark.parametrize(
    "specs",
    [
        [C1, C0],
        [
            conversation(
                "s4",
                "C1",
                {("A", "R1"): "blue_box [T:K]", ("P", "O1"): "[S:A@R1]", ("B", "R2"): "[S:P@O1]"},
                {("A", "T0"): "d", ("B", "R2"): "u"},
                intervention="active_observers",
            ),
            conversation("s5", "C0", {}),
        ],
    ],
)
def test_records_match_the_one_event_at_a_time_reference(specs: list[dict[str, object]]) -> None:
    run = tables(*specs)
    _same(records(run, "citations"), records_by_event(run, "citations"))
    edited = _edited()
    _same(records(edited, "citations"), records_by_event(edited, "citations"))


@pytest.mark.parametrize("enabled", [True, False])
def test_records_leave_the_collector_as_they_found_it(enabled: bool) -> None:
    import gc

    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        found = records(tables(C1, C0), "citations")
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
    assert [r.conversation_id for r in found] == ["condition=C1/s1/0", "condition=C0/s2/0"]
