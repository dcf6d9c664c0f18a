"""Testimony's order answers and the votes the stance pairs read, on a hand-built run whose
rows are worked out below."""

from __future__ import annotations

import json

import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables
from backchannel.paradigms.testimony._order import order_answers
from backchannel.paradigms.testimony._stances import _votes

from ._lineage_run import conversation, tables

# Seqs run on across the run: s1 testimonies 0-4, statement 5, votes 6 (A T0 t), 7 (A R1 u),
# 8 (B R1 x: a parse failure); s2 testimonies 9-13, vote 14 (C T0 d).
SPECS = (
    conversation(
        "s1", "C1", {("A", "R1"): "[T:K]"}, {("A", "T0"): "t", ("A", "R1"): "u", ("B", "R1"): "x"}
    ),
    conversation("s2", "C0", {}, {("C", "T0"): "d"}),
)
S1, S2 = "condition=C1/s1/0", "condition=C0/s2/0"


def _run() -> RunTables:
    """The run with options shown in s1 only, and A's T0 vote of s1 asked again at seq 99 but
    stored before every other event (green_box)."""
    base = tables(*SPECS)
    events = base.events.drop(columns="meta")
    again = events[events["seq"] == 6].copy()
    again["seq"], again["value"] = 99, json.dumps("green_box")
    conversations = base.conversations.copy()
    meta = json.loads(str(conversations.loc[0, "meta"]))
    conversations.loc[0, "meta"] = json.dumps({**meta, "options": ["red_box", "blue_box"]})
    return RunTables(pd.concat([again, events], ignore_index=True), base.labels, conversations)


def test_order_answers_are_every_private_vote_in_stored_order() -> None:
    found = order_answers(_run())
    assert list(found.columns) == list(ORDER_COLUMNS)
    shown = ["red_box", "blue_box"]
    rows = found.to_dict("list")
    # A text column: no answer reads as missing.
    rows["answer"] = [None if pd.isna(a) else a for a in rows["answer"]]
    assert rows == {
        "conversation_id": [S1, S1, S1, S1, S2],
        "seq": [99, 6, 7, 8, 14],
        "agent": ["A", "A", "A", "B", "C"],
        "role": ["member"] * 5,
        "options": [shown, shown, shown, shown, None],
        "speakers": [None] * 5,
        # UNKNOWN is an answer here (the first-option check leaves it out); a failed vote none.
        "answer": ["green_box", "red_box", "UNKNOWN", None, "blue_box"],
    }


def test_votes_keep_the_later_seq_of_an_agent_and_round() -> None:
    found = _votes(_run())
    # A's T0 vote at seq 99 replaces seq 6 though it is stored first.
    assert found == {
        (S1, "A", 0): (99, "green_box", "ok"),
        (S1, "A", 2): (7, "UNKNOWN", "ok"),
        (S1, "B", 2): (8, None, "parse_failure"),
        (S2, "C", 0): (14, "blue_box", "ok"),
    }


def test_no_votes_no_rows() -> None:
    found = order_answers(tables(conversation("s3", "C0", {})))
    assert found.empty and list(found.columns) == list(ORDER_COLUMNS)
