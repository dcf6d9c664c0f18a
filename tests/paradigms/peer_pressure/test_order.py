"""Peer pressure's order answers on a hand-built run: each honest agent's main private answer
after a round against the others' positions in that round, in the order they spoke."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
from _reference import speaker_lists

from backchannel.analysis import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    RunTables,
    order_check,
)
from backchannel.paradigms.peer_pressure._order import _event_labels, _speaker_lists, order_answers


def _event(
    seq: int, kind: str, name: str, round_: int, agent: str, role: str, **extra: Any
) -> dict:
    channel = "public" if kind == "message" else "private"
    return {
        **dict.fromkeys(EVENT_COLUMNS),
        "conversation_id": "c1",
        "seq": seq,
        "kind": kind,
        "name": name,
        "round": round_,
        "agent": agent,
        "role": role,
        "channel": channel,
        "status": "ok",
        "meta": "{}",
        **extra,
    }


def tables() -> RunTables:
    """Round 1: Alice (adversary), Bob (endorses), Cara (hedges); then Bob answers the false
    answer and Cara the true one. The probes before round 1 have no speakers."""
    events = [
        _event(0, "probe", "answer", 0, "Bob", "honest"),
        _event(1, "message", "turn", 1, "Alice", "adversary", turn=0),
        _event(2, "message", "turn", 1, "Bob", "honest", turn=1),
        _event(3, "message", "turn", 1, "Cara", "honest", turn=2),
        _event(4, "probe", "answer", 1, "Bob", "honest"),
        _event(5, "probe", "answer", 1, "Cara", "honest"),
        _event(6, "probe", "off_the_record", 1, "Cara", "honest"),  # not the main probe
    ]
    labels = [(2, "endorse"), (3, "hedge"), (4, "manipulated"), (5, "true"), (0, "true")]
    conversations = pd.DataFrame(
        [
            {
                **dict.fromkeys(CONVERSATION_BASE_COLUMNS),
                "conversation_id": "c1",
                "status": "done",
                "cell": json.dumps({}),
                "meta": "{}",
            }
        ]
    )
    label_frame = pd.DataFrame(
        [
            {
                **dict.fromkeys(LABEL_COLUMNS),
                "conversation_id": "c1",
                "event_seq": seq,
                "judge": "rule",
                "label": label,
                "status": "ok",
            }
            for seq, label in labels
        ]
    )
    return RunTables(pd.DataFrame(events), label_frame, conversations, {"factors": []})


def test_answers_are_set_against_the_other_speakers_of_the_round() -> None:
    answers = order_answers(tables(), "rule")
    rows = {r["agent"]: r for r in answers.to_dict(orient="records")}
    assert set(rows) == {"Bob", "Cara"}
    assert rows["Bob"]["speakers"] == ["manipulated", "other"]  # Alice pushes; Cara hedged
    assert rows["Bob"]["answer"] == "manipulated"
    assert rows["Cara"]["speakers"] == ["manipulated", "manipulated"]  # Alice; Bob endorsed
    assert rows["Cara"]["answer"] == "true"
    assert rows["Bob"]["options"] is None
    # First speaker: Bob follows Alice (chance 1/2), Cara does not (chance 0): 1 of 2.
    first = order_check(answers, "first_speaker")
    assert first is not None
    assert (first["n"], first["hits"], first["chance"]) == (2, 1, 0.25)
    last = order_check(answers, "last_speaker")
    assert last is not None and (last["hits"], last["chance"]) == (0, 0.25)
    assert order_check(answers, "first_option") is None


def _two_conversations(labels: pd.DataFrame) -> RunTables:
    conversations = pd.DataFrame(
        {"conversation_id": ["c1", "c2"], "status": ["done", "done"]}, dtype=object
    )
    return RunTables(pd.DataFrame(columns=EVENT_COLUMNS), labels, conversations)


def test_an_event_takes_its_last_valid_label() -> None:
    labels = pd.DataFrame(
        {
            "conversation_id": ["c1", "c1", "c1", "c2", "c2", "c9", "c2", "c2"],
            "event_seq": [0, 0, 1, 0, 1, 0, 3, 3],
            "label": ["true", "reject", "endorse", None, "true", "true", "true", float("nan")],
            "status": ["ok", "ok", "parse_failure", "ok", "ok", "ok", "ok", "ok"],
            "judge": "rule",
        },
        dtype=object,
    )
    conversation = np.array([0, 0, 1, 1, 1, 1, 0])
    seq = np.array([0, 1, 0, 1, 2, 3, 5])
    found = _event_labels(_two_conversations(labels), "rule", conversation, seq, np.arange(6))
    # c1/0: the last of two; c1/1: failed; c2/0: no value; c2/1: true; c2/2: none; c2/3: a
    # NaN after true names nothing; c9: no event; c1/5 is not wanted
    assert found.tolist() == ["reject", "", "", "true", "", "nan", ""]


def test_on_a_topology_no_answer_has_speakers() -> None:
    run = tables()
    answers = order_answers(run, "rule")
    assert answers["seq"].tolist() == [4, 5]
    run.conversations["meta"] = json.dumps({"topology": "ring"})
    assert order_answers(run, "rule")["speakers"].tolist() == [None, None]


def test_speaker_lists_match_the_per_row_reference() -> None:
    rng = np.random.default_rng(3)
    cases = [
        (np.zeros(0, dtype=np.int64), np.array([0]), np.zeros(0, dtype=bool)),  # no probes
        (np.zeros(0, dtype=np.int64), np.array([0, 0]), np.array([False])),  # heard nobody
        (np.array([1]), np.array([0, 1]), np.array([True])),  # skipped
        # a prefix of another pattern, and patterns whose digits could collide
        (np.array([0, 0, 1, 0, 2, 2, 0]), np.array([0, 1, 3, 3, 5, 6, 7]), np.zeros(6, bool)),
    ]
    for _ in range(20):
        sizes = rng.integers(0, 5, size=rng.integers(1, 40))
        bounds = np.r_[0, np.cumsum(sizes)]
        cases.append((rng.integers(0, 3, size=bounds[-1]), bounds, rng.random(len(sizes)) < 0.2))
    for heard, bounds, skip in cases:
        got = _speaker_lists(np.asarray(heard, np.int64), np.asarray(bounds), skip).tolist()
        assert got == speaker_lists(np.asarray(heard, np.int64), bounds, skip)
    # rows with one pattern share one list
    shared = _speaker_lists(np.array([1, 2, 1, 2]), np.array([0, 2, 4]), np.zeros(2, bool))
    assert shared[0] is shared[1] and shared[0] == ["manipulated", "true"]
