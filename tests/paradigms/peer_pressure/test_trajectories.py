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
    got = {
        (r.conversation_id, r.agent, r.round): (
            r.private,
            r.public,
            r.neighbours_private,
            r.neighbours_public,
        )
        for r in frame.itertuples()
    }
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
