"""The dyad's opinion trajectories on hand-built runs (states worked out by hand from the
tags), and the Friedkin-Johnsen fit recovering a planted susceptibility and stubbornness on
`sim/population`."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import OPINION_COLUMNS
from backchannel.paradigms import AnalysisOptions
from backchannel.paradigms.dyad import Dyad

from ._build import FAIL, Conv, tables

NAN = math.nan


def test_trajectories_of_a_hand_built_run() -> None:
    run = tables(
        [
            # States from (3, 5): round 1 D IGNORE -> 3, O REJECT away from 3 -> 6; round 2
            # D ACCEPT towards 6 -> 4, O ACCEPT towards 4 -> 5.
            Conv(
                "a",
                "m1",
                "m2",
                "human",
                "plain",
                "first",
                [3, 4, 4],
                [5, 5, 6],
                ["IGNORE", "ACCEPT"],
                ["REJECT", "ACCEPT"],
            ),
            # The opposite wording: raw 3, 2 / 1, 1 align to 3, 4 / 5, 5; the Opponent's
            # category cannot be read, so its state is unknown.
            Conv("b", "m1", "m2", "human", "plain", "opposite", [3, 2], [1, 1], ["IGNORE"], [FAIL]),
        ]
    )
    frame = Dyad().opinion_trajectories(run, AnalysisOptions())
    assert list(frame.columns) == list(OPINION_COLUMNS)
    got = {
        (r.conversation_id, r.agent, r.round): (
            r.model,
            r.private,
            r.public,
            r.neighbours_private,
            r.neighbours_public,
        )
        for r in frame.itertuples()
    }
    expected = {
        ("a", "discussant", 0): ("m1", 3, 3, NAN, NAN),
        ("a", "discussant", 1): ("m1", 4, 3, 6, NAN),  # nothing of the Opponent's before
        ("a", "discussant", 2): ("m1", 4, 4, 5, 6),  # spoke after the Opponent's round 1
        ("a", "opponent", 0): ("m2", 5, 5, NAN, NAN),
        ("a", "opponent", 1): ("m2", 5, 6, 3, 3),
        ("a", "opponent", 2): ("m2", 6, 5, 4, 4),
        ("b", "discussant", 0): ("m1", 3, 3, NAN, NAN),
        ("b", "discussant", 1): ("m1", 4, 3, NAN, NAN),
        ("b", "opponent", 0): ("m2", 5, 5, NAN, NAN),
        ("b", "opponent", 1): ("m2", 5, NAN, 3, 3),
    }
    assert set(got) == set(expected)
    for key, (model, *values) in expected.items():
        assert got[key][0] == model
        assert list(got[key][1:]) == pytest.approx(values, nan_ok=True), key


SUSCEPTIBILITY, STUBBORNNESS = 0.2, 0.15


def test_the_fit_recovers_the_planted_weights(tmp_path: Path) -> None:
    experiment = {
        "name": "planted-dyad-influence",
        "paradigm": "dyad",
        "seed": 8,
        "replicates": 60,
        "factors": {"wording": ["first", "opposite"]},
        "settings": {
            "discussant_model": "sim/population#open",
            "opponent_model": "sim/population#firm",
            "stance": "human",
            "style": "plain",
            "rounds": 8,
        },
        "population": {
            "dyad": {"discussant_start": 3.0, "stance_strength": 3.0, "start_spread": 0.5},
            "models": {
                "open": {"dyad": {"susceptibility": SUSCEPTIBILITY, "stubbornness": STUBBORNNESS}},
                "firm": {"dyad": {"susceptibility": 0.0}},
            },
        },
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    influence = run.metrics().influence
    assert influence is not None
    open_rows = [r for r in influence.rows if r.agent_model == "sim/population#open"]
    assert {(r.cell["wording"], r.channel) for r in open_rows} == {
        (w, c) for w in ("first", "opposite") for c in ("private", "public")
    }
    for row in open_rows:
        a, s = row.susceptibility, row.stubbornness
        assert row.skipped is None and a.low is not None and s.low is not None
        assert a.low <= SUSCEPTIBILITY <= a.high, (row.cell, row.channel, a)
        assert s.low <= STUBBORNNESS <= s.high, (row.cell, row.channel, s)
        assert row.error_reduction.estimate is not None and row.error_reduction.estimate > 0
    # The firm Opponent never moves: nothing tells its two weights apart.
    firm = [r for r in influence.rows if r.agent_model == "sim/population#firm"]
    assert firm and all(r.skipped is not None for r in firm)
