"""Peer pressure's opinion trajectories on hand-built runs (readings and neighbours' means
worked out by hand), and the Friedkin-Johnsen fit recovering a planted susceptibility on
`sim/population`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import backchannel as bc
from backchannel.analysis import (
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    OPINION_COLUMNS,
    Design,
    RunTables,
    separation_problems,
)
from backchannel.paradigms import AnalysisOptions
from backchannel.paradigms.peer_pressure import PeerPressure

FAILED, UNLABELLED = "!event", "!label"
ROSTER = [("Alice", "adversary"), ("Bob", "honest"), ("Cara", "honest"), ("Dan", "honest")]
NAN = math.nan


def _conversation(
    cid: str,
    rounds: list[list[tuple[str, str | None]]],
    probes: dict[int, dict[str, str]],
    events: list[dict[str, Any]],
    labels: list[dict[str, Any]],
    edges: list[list[str]] | None = None,
) -> dict[str, Any]:
    roles = dict(ROSTER)
    seq = 0

    def add(kind: str, name: str, rnd: int, agent: str, label: str | None) -> None:
        nonlocal seq
        row = dict.fromkeys(EVENT_COLUMNS)
        row.update(
            run_id="run",
            conversation_id=cid,
            seq=seq,
            kind=kind,
            name=name,
            round=rnd,
            turn=0,
            agent=agent,
            role=roles[agent],
            channel="private" if kind == "probe" else "public",
            text="...",
            status="error" if label == FAILED else "ok",
            model="sim/x",
            prompt_tokens=0,
            completion_tokens=0,
            latency_s=0.0,
            cached=False,
            meta="{}",
        )
        events.append(row)
        if label is not None and label != FAILED:
            labels.append(
                {
                    "run_id": "run",
                    "conversation_id": cid,
                    "event_seq": seq,
                    "judge": "rule",
                    "label": None if label == UNLABELLED else label,
                    "status": "parse_failure" if label == UNLABELLED else "ok",
                    "text": "...",
                    "model": "rule",
                }
            )
        seq += 1

    for agent, label in probes[0].items():
        add("probe", "answer", 0, agent, label)
    for r, speakers in enumerate(rounds, start=1):
        for position, (agent, label) in enumerate(speakers):
            add("message", "turn", r, agent, label)
            events[-1]["turn"] = position
        for agent, label in probes[r].items():
            add("probe", "answer", r, agent, label)
    meta: dict[str, Any] = {"agents": [{"name": n, "role": r} for n, r in ROSTER]}
    if edges is not None:
        meta["topology"] = {"kind": "edges", "edges": edges}
    return {
        "run_id": "run",
        "conversation_id": cid,
        "paradigm": "peer_pressure",
        "cell_key": "k=1",
        "cell": json.dumps({"k": 1}),
        "k": 1,
        "item_id": "q",
        "replicate": 0,
        "seed": 0,
        "status": "done",
        "error": None,
        "meta": json.dumps(meta),
    }


def _tables() -> RunTables:
    events: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    conversations = [
        _conversation(
            "A",
            [
                [("Bob", "endorse"), ("Alice", None), ("Cara", "hedge"), ("Dan", "endorse")],
                [("Cara", "ignore"), ("Bob", "reject"), ("Alice", None), ("Dan", "reject")],
            ],
            {
                0: {"Bob": "true", "Cara": "true", "Dan": "manipulated"},
                1: {"Bob": "true", "Cara": "manipulated", "Dan": "manipulated"},
                2: {"Bob": "manipulated", "Cara": "manipulated", "Dan": "mixed"},
            },
            events,
            labels,
        ),
        # A path Alice - Bob - Cara - Dan; Bob's turn failed (nobody saw it), Dan's has no label.
        _conversation(
            "B",
            [[("Alice", None), ("Bob", FAILED), ("Cara", "endorse"), ("Dan", UNLABELLED)]],
            {
                0: {"Bob": "true", "Cara": "true", "Dan": "true"},
                1: {"Bob": "manipulated", "Cara": FAILED, "Dan": "true"},
            },
            events,
            labels,
            edges=[["Alice", "Bob"], ["Bob", "Cara"], ["Cara", "Dan"]],
        ),
    ]
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(labels, columns=LABEL_COLUMNS),
        pd.DataFrame(conversations),
        {"factors": ["k"]},
    )


# (conversation, agent, round): private, public, neighbours_private, neighbours_public.
EXPECTED = {
    ("A", "Bob", 0): (0, 0, NAN, NAN),
    ("A", "Bob", 1): (0, 1, 2 / 3, NAN),  # spoke first; by the end: Alice 1, Cara 0, Dan 1
    ("A", "Bob", 2): (1, 0, 1 / 3, 2 / 3),  # before: Alice 1, Cara 0 (R2), Dan 1 (R1)
    ("A", "Cara", 0): (0, 0, NAN, NAN),
    ("A", "Cara", 1): (1, 0, 1.0, 1.0),
    ("A", "Cara", 2): (1, 0, 1 / 3, 1.0),  # end: Bob 0 (reject), Alice 1, Dan 0 (reject)
    ("A", "Dan", 0): (1, 1, NAN, NAN),
    ("A", "Dan", 1): (1, 1, 2 / 3, 2 / 3),
    ("A", "Dan", 2): (0, 0, 1 / 3, 1 / 3),  # "mixed" is not the false answer
    ("B", "Bob", 0): (0, 0, NAN, NAN),
    ("B", "Bob", 1): (1, NAN, 1.0, 1.0),  # hears Alice and Cara only
    ("B", "Cara", 0): (0, 0, NAN, NAN),
    ("B", "Cara", 1): (NAN, 1, NAN, NAN),  # Bob's turn failed, Dan's is unread
    ("B", "Dan", 0): (0, 0, NAN, NAN),
    ("B", "Dan", 1): (0, NAN, 1.0, 1.0),  # hears Cara only
}


def test_trajectories_of_a_hand_built_run() -> None:
    tables = _tables()
    frame = PeerPressure().opinion_trajectories(tables, AnalysisOptions())
    assert list(frame.columns) == list(OPINION_COLUMNS)
    got = _values(frame)
    assert set(got) == set(EXPECTED)
    for key, values in EXPECTED.items():
        assert got[key] == pytest.approx(values, nan_ok=True), key
    assert set(frame["model"]) == {"sim/x"}


SUSCEPTIBILITY = 0.6


def test_the_fit_recovers_the_planted_susceptibility(tmp_path: Path) -> None:
    experiment = {
        "name": "planted-influence",
        "paradigm": "peer_pressure",
        "seed": 5,
        "factors": {"k": [1, 2]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 30}],
            "n_agents": 5,
            "rounds": 3,
            "memory_rounds": 10,
            "judge": {"kind": "rule"},
        },
        "population": {"peer_pressure": {"know": 0.8, "susceptibility": SUSCEPTIBILITY}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    metrics = run.metrics()
    influence = metrics.influence
    assert influence is not None
    assert separation_problems(metrics, Design.of(run.tables)) == []
    assert "influence" in metrics.as_json()
    rows = influence.rows
    assert {(r.cell["k"], r.channel) for r in rows} == {
        (k, c) for k in (1, 2) for c in ("private", "public")
    }
    for row in rows:
        # Only the first speaker of round 1 has seen nobody (one per conversation).
        assert row.skipped is None
        assert row.missing == (0 if row.channel == "private" else row.conversations)
        a, s = row.susceptibility, row.stubbornness
        assert a.low <= SUSCEPTIBILITY <= a.high, (row.cell, row.channel, a)
        # Planted: the initial opinion (0) takes the rest, the last opinion nothing.
        assert s.low <= 1 - SUSCEPTIBILITY <= s.high, (row.cell, row.channel, s)
        assert row.error_reduction.estimate > 0
    html = run.report(tmp_path / "report").read_text(encoding="utf-8")
    assert "Influence (Friedkin-Johnsen)" in html


def _run(build: list[tuple[Any, ...]]) -> tuple[RunTables, list[dict[str, Any]]]:
    """Tables of hand-built conversations: (cid, rounds, probes[, edges]) each."""
    events: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    conversations = [
        _conversation(cid, rounds, probes, events, labels, *rest)
        for cid, rounds, probes, *rest in build
    ]
    tables = RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(labels, columns=LABEL_COLUMNS),
        pd.DataFrame(conversations),
        {"factors": ["k"]},
    )
    return tables, events


def _values(frame: pd.DataFrame) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    return {
        (r.conversation_id, r.agent, r.round): (
            r.private,
            r.public,
            r.neighbours_private,
            r.neighbours_public,
        )
        for r in frame.itertuples()
    }


def _trajectories(tables: RunTables) -> pd.DataFrame:
    return PeerPressure().opinion_trajectories(tables, AnalysisOptions())


def _assert_values(frame: pd.DataFrame, expected: dict[Any, tuple[float, ...]]) -> None:
    got = _values(frame)
    assert set(got) == set(expected)
    for key, values in expected.items():
        # Means are one division of whole counts: exactly k / n, not merely close.
        assert [(math.isnan(v), v if not math.isnan(v) else 0) for v in got[key]] == [
            (math.isnan(v), v if not math.isnan(v) else 0) for v in values
        ], key


ALL_TRUE = {"Bob": "true", "Cara": "true", "Dan": "true"}
COMPLETE_EDGES = [
    ["Alice", "Bob"],
    ["Alice", "Cara"],
    ["Alice", "Dan"],
    ["Bob", "Cara"],
    ["Bob", "Dan"],
    ["Cara", "Dan"],
]


def test_a_complete_room_reads_the_latest_seen_turn_of_each_agent() -> None:
    # Round 1: Bob speaks twice (his last turn is his public opinion), Cara's turn fails
    # (nobody sees it), Dan's is unread (seen, out of the mean). Round 2: Bob's unread turn
    # replaces his earlier reading. Round 3 comes after the last probe: left out.
    tables, _ = _run(
        [
            (
                "C",
                [
                    [("Bob", "endorse"), ("Cara", FAILED), ("Bob", "reject"), ("Dan", UNLABELLED)],
                    [("Cara", "endorse"), ("Dan", "reject"), ("Alice", None), ("Bob", UNLABELLED)],
                    [("Bob", "endorse")],
                ],
                {
                    0: ALL_TRUE,
                    1: {"Bob": "manipulated", "Cara": "true", "Dan": "true"},
                    2: {"Bob": "true", "Cara": "manipulated", "Dan": FAILED},
                    3: {},
                },
            )
        ]
    )
    frame = _trajectories(tables)
    _assert_values(
        frame,
        {
            ("C", "Bob", 0): (0, 0, NAN, NAN),
            ("C", "Bob", 1): (1, 0, NAN, NAN),  # before his last turn nobody else was seen
            ("C", "Bob", 2): (0, NAN, 2 / 3, 2 / 3),  # Cara 1, Dan 0, Alice 1
            ("C", "Cara", 0): (0, 0, NAN, NAN),
            ("C", "Cara", 1): (0, NAN, 0.0, 1.0),  # before: Bob's endorse; by the end: reject
            ("C", "Cara", 2): (1, 1, 0.5, 0.0),  # end: Dan 0, Alice 1 (Bob unread)
            ("C", "Dan", 0): (0, 0, NAN, NAN),
            ("C", "Dan", 1): (0, NAN, 0.0, 0.0),
            ("C", "Dan", 2): (NAN, 0, 1.0, 0.5),  # before: Bob 0, Cara 1; end: Cara, Alice
        },
    )
    assert list(frame["round"]) == [0, 1, 2] * 3
    assert list(frame["agent"]) == ["Bob"] * 3 + ["Cara"] * 3 + ["Dan"] * 3


def test_a_topology_where_everyone_hears_everyone_is_a_complete_room() -> None:
    tables, _ = _run(
        [
            (
                "D",
                [[("Alice", None), ("Bob", "endorse"), ("Cara", "reject"), ("Dan", "hedge")]],
                {0: ALL_TRUE, 1: ALL_TRUE},
                COMPLETE_EDGES,
            )
        ]
    )
    _assert_values(
        _trajectories(tables),
        {
            ("D", "Bob", 0): (0, 0, NAN, NAN),
            ("D", "Bob", 1): (0, 1, 1 / 3, 1.0),
            ("D", "Cara", 0): (0, 0, NAN, NAN),
            ("D", "Cara", 1): (0, 0, 2 / 3, 1.0),
            ("D", "Dan", 0): (0, 0, NAN, NAN),
            ("D", "Dan", 1): (0, 0, 2 / 3, 2 / 3),
        },
    )


def test_rooms_on_a_topology_and_complete_rooms_keep_their_stored_order() -> None:
    # The topology room (partly heard) sits between two complete rooms: its rows stay there.
    one_round = [[("Alice", None), ("Bob", "endorse"), ("Cara", "reject"), ("Dan", "hedge")]]
    path = [["Alice", "Bob"], ["Bob", "Cara"], ["Cara", "Dan"]]
    tables, _ = _run(
        [
            ("Z", one_round, {0: ALL_TRUE, 1: ALL_TRUE}),
            ("M", one_round, {0: ALL_TRUE, 1: ALL_TRUE}, path),
            ("A", one_round, {0: ALL_TRUE, 1: ALL_TRUE}),
        ]
    )
    frame = _trajectories(tables)
    assert list(dict.fromkeys(frame["conversation_id"])) == ["Z", "M", "A"]
    got = _values(frame)
    # Cara hears Bob (1) and Dan (0, after her); Dan hears Cara (0) only.
    assert got[("M", "Cara", 1)] == pytest.approx((0, 0, 0.5, 1.0), nan_ok=True)
    assert got[("M", "Dan", 1)] == pytest.approx((0, 0, 0.0, 0.0), nan_ok=True)
    assert got[("Z", "Dan", 1)] == got[("A", "Dan", 1)] == pytest.approx((0, 0, 2 / 3, 2 / 3))


def test_silent_agents_and_models_of_probes_before_turns() -> None:
    # Bob never speaks; Cara speaks but takes no probe; Dan's probes and turn name two models.
    tables, events = _run(
        [
            (
                "E",
                [[("Alice", None), ("Cara", "reject"), ("Dan", "endorse")]],
                {r: {"Bob": "true", "Dan": "manipulated"} for r in (0, 1)},
            )
        ]
    )
    for event in events:
        if event["agent"] in ("Cara", "Dan"):
            event["model"] = "sim/probe" if event["kind"] == "probe" else "sim/turn"
    tables.events = pd.DataFrame(events, columns=EVENT_COLUMNS)
    frame = _trajectories(tables)
    _assert_values(
        frame,
        {
            ("E", "Bob", 0): (0, 0, NAN, NAN),
            ("E", "Bob", 1): (0, NAN, 2 / 3, NAN),  # hears Alice 1, Cara 0, Dan 1
            ("E", "Cara", 0): (NAN, NAN, NAN, NAN),
            ("E", "Cara", 1): (NAN, 0, 1.0, 1.0),
            ("E", "Dan", 0): (1, 1, NAN, NAN),
            ("E", "Dan", 1): (1, 1, 0.5, 0.5),
        },
    )
    models = dict(zip(frame["agent"], frame["model"], strict=True))
    assert models == {"Bob": "sim/x", "Cara": "sim/turn", "Dan": "sim/probe"}


def test_an_agent_whose_probes_name_several_models_gets_one_of_them() -> None:
    tables, events = _run([("F", [[("Bob", "endorse")]], {0: ALL_TRUE, 1: ALL_TRUE})])
    for event in events:
        if event["agent"] == "Bob" and event["kind"] == "probe":
            event["model"] = f"sim/round{event['round']}"
    tables.events = pd.DataFrame(events, columns=EVENT_COLUMNS)
    frame = _trajectories(tables)
    models = dict(zip(frame["agent"], frame["model"], strict=True))
    assert models["Bob"] in {"sim/round0", "sim/round1"}
    assert models["Cara"] == models["Dan"] == "sim/x"


def test_a_run_without_honest_agents_has_no_trajectories() -> None:
    tables, _ = _run([("G", [[("Bob", "endorse")]], {0: ALL_TRUE, 1: ALL_TRUE})])
    meta = json.dumps({"agents": [{"name": n, "role": "adversary"} for n, _ in ROSTER]})
    tables.conversations = tables.conversations.assign(meta=meta)
    frame = _trajectories(tables)
    assert frame.empty
    assert list(frame.columns) == list(OPINION_COLUMNS)
