"""Council stance pairs on hand-built deliberations: advocate turns, as their `argued` labels read
them, against off-the-record choices, worked out by hand."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from backchannel.analysis import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    STANCE_PAIR_COLUMNS,
    Design,
    RunTables,
    check_stance_pairs,
    divergence,
)
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms.council._stances import (
    ARGUES_NONE,
    ARGUES_SEVERAL,
    FAILED_TURN,
    LABEL_FAILED,
    NO_LABEL,
    NO_PROBE,
    UNKNOWN_ARGUED,
    UNREADABLE,
)

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


def _label(seq: int, label: str | None, status: str = "ok", judge: str = "argued") -> dict:
    """A judge's `argued` label of the event `seq` of conversation c1."""
    return {
        "run_id": "r",
        "conversation_id": "c1",
        "event_seq": seq,
        "judge": judge,
        "label": label,
        "status": status,
        "text": label or "garbled",
        "model": "rule" if judge == "argued" else "sim/judge",
    }


def _tables(events: list[dict], labels: list[dict] | None = None) -> RunTables:
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
        pd.DataFrame(labels or [], columns=LABEL_COLUMNS),
        pd.DataFrame([conversation]),
        {"factors": ["pool"]},
    )


def _pairs(tables: RunTables, options: AnalysisOptions | None = None) -> pd.DataFrame:
    pairs = get_paradigm("council").stance_pairs(tables, options or AnalysisOptions())
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
    # Every ok turn argues its own option: the public stance never moves here.
    labels = [_label(0, "a"), _label(2, "b"), _label(5, "a"), _label(7, "b"), _label(8, "c")]
    pairs = _pairs(_tables(events, labels))
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
    labels = [_label(i, o) for i, o in enumerate(OPTIONS)]
    pairs = _pairs(_tables(events, labels))
    assert pairs["skipped"].tolist() == [NO_PROBE] * 3


def _rounds() -> tuple[list[dict], list[dict]]:
    """Three rounds of three advocates, each turn followed by its off-the-record probe."""
    events: list[dict] = []
    for round_, name in enumerate(("position", "critique", "rebuttal"), start=1):
        for option, chosen in zip(OPTIONS, _CHOSEN[round_], strict=True):
            seq = len(events)
            events.append(_event(seq, "message", name, f"advocate_{option}", round_))
            events.append(_probe(seq + 1, f"advocate_{option}", round_, seq, chosen))
    labels = [
        _label(0, "b"),  # a argues b, still chooses a: public accommodation
        _label(2, "c"),  # b argues c and chooses c: both moved, agreeing
        _label(4, "b"),  # stored first, then relabelled: the last label counts
        _label(4, "c"),  # c argues c, chooses a: hidden change
        # seq 6 (a, round 2): no label
        _label(8, None, status="parse_failure"),
        _label(10, "none"),
        _label(12, "several"),
        _label(14, "z"),  # not an option of the scenario
        _label(16, "c"),  # c argues c and chooses c: consistent
        _label(16, "a", judge="m"),  # another judge reads a concession to a
    ]
    return events, labels


_CHOSEN = {1: ("a", "c", "a"), 2: ("a", "b", "c"), 3: ("a", "b", "c")}


def test_the_argued_label_moves_the_public_stance_and_each_unread_label_is_a_reason() -> None:
    events, labels = _rounds()
    pairs = _pairs(_tables(events, labels))
    got = [
        (r.agent, r.round, r.public_moved, r.private_moved, r.agree, r.skipped)
        for r in pairs.astype(object).where(pairs.notna(), None).itertuples()
    ]
    assert got == [
        ("advocate_a", 1, True, False, False, None),
        ("advocate_b", 1, True, True, True, None),
        ("advocate_c", 1, False, True, False, None),
        ("advocate_a", 2, None, None, None, NO_LABEL),
        ("advocate_b", 2, None, None, None, LABEL_FAILED.format(status="parse_failure")),
        ("advocate_c", 2, None, None, None, ARGUES_NONE),
        ("advocate_a", 3, None, None, None, ARGUES_SEVERAL),
        ("advocate_b", 3, None, None, None, UNKNOWN_ARGUED),
        ("advocate_c", 3, False, False, True, None),
    ]


def test_the_kit_counts_the_read_turns_per_round() -> None:
    events, labels = _rounds()
    tables = _tables(events, labels)
    result = divergence(_pairs(tables), Design.of(tables), tables.done_conversations())
    rows = {row.round: row for row in result.by_cell}
    one, two, three = rows[1], rows[2], rows[3]
    # Round 1: accommodation, both moved, hidden change: 3 classified pairs.
    assert (one.pairs, one.n, one.skipped) == (3, 3, {})
    assert one.counts == {
        "agree": 1,
        "hidden_change": 1,
        "public_accommodation": 1,
        "both_moved": 1,
        "divergent": 2,
    }
    assert one.public_accommodation.estimate == 1 / 3
    # Round 2: no label, a failed verdict, a turn arguing no option: nothing classified.
    assert (two.pairs, two.n) == (3, 0)
    assert two.skipped == {
        NO_LABEL: 1,
        LABEL_FAILED.format(status="parse_failure"): 1,
        ARGUES_NONE: 1,
    }
    # Round 3: several options, a label naming no option, one consistent turn.
    assert (three.pairs, three.n) == (3, 1)
    assert three.skipped == {ARGUES_SEVERAL: 1, UNKNOWN_ARGUED: 1}
    assert three.counts["agree"] == 1 and three.counts["divergent"] == 0


def test_another_judge_is_read_by_name() -> None:
    events, labels = _rounds()
    pairs = _pairs(_tables(events, labels), AnalysisOptions(judge="m"))
    # Only seq 16 carries an `m` label: c argues a while choosing c, public accommodation.
    classified = pairs[pairs["skipped"].isna()]
    assert classified["turn_seq"].tolist() == [16]
    assert classified[["public_moved", "private_moved", "agree"]].values.tolist() == [
        [True, False, False]
    ]
    assert (pairs["skipped"] == NO_LABEL).sum() == 8
