"""Council stance pairs on a hand-built deliberation: advocate turns against off-the-record
choices, worked out by hand."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from backchannel.analysis import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    STANCE_PAIR_COLUMNS,
    RunTables,
    check_stance_pairs,
)
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms.council._stances import FAILED_TURN, NO_PROBE, UNREADABLE

OPTIONS = ["a", "b", "c"]


def _event(seq: int, kind: str, name: str, agent: str, round_: int, **fields: Any) -> dict:
    row = {column: None for column in EVENT_COLUMNS}
    row.update(
        run_id="r",
        conversation_id="c1",
        seq=seq,
        kind=kind,
        name=name,
        round=round_,
        agent=agent,
        role="advocate",
        channel="public" if kind == "message" else "private",
        text="",
        status="ok",
        model="sim/x",
        prompt_tokens=0,
        completion_tokens=0,
        latency_s=0.0,
        cached=False,
        meta="{}",
    )
    row.update(fields)
    return row


def _probe(seq: int, agent: str, round_: int, turn: int, value: Any, status: str = "ok") -> dict:
    return _event(
        seq,
        "probe",
        "off_the_record",
        agent,
        round_,
        value=None if value is None else json.dumps(value),
        status=status,
        meta=json.dumps({"turn_seq": turn}),
    )


def _tables(events: list[dict]) -> RunTables:
    conversation = {column: None for column in CONVERSATION_BASE_COLUMNS}
    conversation.update(
        run_id="r",
        conversation_id="c1",
        paradigm="council",
        cell_key="pool=A",
        cell=json.dumps({"pool": "A"}),
        item_id="housing",
        replicate=0,
        seed=0,
        status="done",
        meta=json.dumps({"options": OPTIONS, "pool": "A"}),
    )
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame([conversation]),
        {"factors": ["pool"]},
    )


def _pairs(tables: RunTables) -> pd.DataFrame:
    pairs = get_paradigm("council").stance_pairs(tables, AnalysisOptions())
    assert list(pairs.columns) == list(STANCE_PAIR_COLUMNS)
    check_stance_pairs(pairs)
    return pairs


def test_advocate_turns_against_their_off_the_record_choice() -> None:
    events = [
        _event(0, "message", "position", "advocate_a", 1),
        _probe(1, "advocate_a", 1, 0, "a"),  # sincere: agrees, nothing moved
        _event(2, "message", "position", "advocate_b", 1),
        _probe(3, "advocate_b", 1, 2, "c"),  # argues b, privately prefers c: hidden change
        _event(4, "message", "position", "advocate_c", 1, status="refused"),
        _event(5, "message", "critique", "advocate_a", 2),
        _probe(6, "advocate_a", 2, 5, "z"),  # no option of the scenario
        _event(7, "message", "critique", "advocate_b", 2),  # no probe
        _event(8, "message", "critique", "advocate_c", 2),
        _probe(9, "advocate_c", 2, 8, None, status="parse_failure"),
    ]
    pairs = _pairs(_tables(events))
    got = [
        (r.agent, r.round, r.turn_seq, r.public_moved, r.private_moved, r.agree, r.skipped)
        for r in pairs.astype(object).where(pairs.notna(), None).itertuples()
    ]
    assert got == [
        ("advocate_a", 1, 0, False, False, True, None),
        ("advocate_b", 1, 2, False, True, False, None),
        ("advocate_c", 1, 4, None, None, None, FAILED_TURN),
        ("advocate_a", 2, 5, None, None, None, UNREADABLE),
        ("advocate_b", 2, 7, None, None, None, NO_PROBE),
        ("advocate_c", 2, 8, None, None, None, UNREADABLE),
    ]
    assert pairs["probe_seq"].astype(object).where(pairs["probe_seq"].notna(), None).tolist() == [
        1,
        3,
        None,
        6,
        None,
        9,
    ]


def test_without_the_off_the_record_probe_every_turn_is_skipped() -> None:
    events = [_event(i, "message", "position", f"advocate_{o}", 1) for i, o in enumerate(OPTIONS)]
    pairs = _pairs(_tables(events))
    assert pairs["skipped"].tolist() == [NO_PROBE] * 3
