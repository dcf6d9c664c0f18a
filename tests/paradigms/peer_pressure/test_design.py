"""Cells come from the design: every setting that can be a factor, used as a two-level factor,
gives per-cell rows for both levels and nothing averaged over unnamed; every example passes the
paradigm check and separates its own factors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, separation_problems
from backchannel.paradigms.peer_pressure import PeerPressure
from backchannel.testing import check_paradigm

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PEER_PRESSURE_EXAMPLES = (
    "peer_pressure",
    "peer_pressure_interventions",
    "peer_pressure_mixed",
    "peer_pressure_size",
    "peer_pressure_topology",
    "quickstart",
)


def _levels(roster: Path) -> dict[str, list[Any]]:
    """Two valid levels of every setting a factor may vary (on a room of three, one adversary)."""
    return {
        "model": ["sim", "sim#other"],
        "dataset": ["counterfact", "popqa"],
        "n_agents": [3, 4],
        "k": [0, 1],
        "k_share": [None, 0.5],
        "roster": [None, str(roster)],
        "topology": ["complete", "ring"],
        "graph": [{"k": 2}, {"k": 4}],
        "placement": ["first", "random"],
        "models": [["sim"], ["sim", "sim#other"]],
        "assignment": ["round_robin", "random"],
        "honest_model": [None, "sim"],
        "adversary_model": [None, "sim#other"],
        "intervention": ["none", "early_correction"],
        "correction_round": [1, 2],
        "rounds": [1, 2],
        "memory_rounds": [1, 2],
        "order": ["shuffled", "fixed"],
        "temperature": [0.5, 0.7],
        "probe_temperature": [0.0, 0.1],
        "max_tokens": [32, 64],
        "probe_max_tokens": [16, 24],
        "off_the_record": [False, True],
        "awareness_probe": [False, True],
        "awareness_model": ["sim", "sim#other"],
    }


@pytest.mark.slow
def test_every_setting_as_a_two_level_factor_gives_rows_per_level(tmp_path: Path) -> None:
    roster = tmp_path / "people.csv"
    roster.write_text("name,persona\nAnn,historian\nBen,scientist\nCal,journalist\nDee,teacher\n")
    experiment = tmp_path / "small.yaml"
    experiment.write_text(
        yaml.safe_dump(
            {
                "name": "every-factor",
                "paradigm": "peer_pressure",
                "seed": 3,
                "settings": {
                    "model": "sim",
                    "datasets": [
                        {"name": "counterfact", "limit": 1},
                        {"name": "popqa", "limit": 1},
                    ],
                    "n_agents": 3,
                    "k": 1,
                    "rounds": 2,
                    "memory_rounds": 2,
                    "judge": {"kind": "rule"},
                    "reask": {"items": 0},
                    "awareness_model": "sim",
                },
            }
        )
    )
    levels = _levels(roster)
    assert set(levels) == set(PeerPressure.factors())  # every setting that can be a factor
    assert check_paradigm(experiment, tmp_path / "check", factors=levels) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", PEER_PRESSURE_EXAMPLES)
def test_the_examples_pass_the_paradigm_check_and_separate_their_factors(
    name: str, tmp_path: Path
) -> None:
    example = EXAMPLES / f"{name}.yaml"
    assert check_paradigm(example, tmp_path / "check", limit=4) == []
    run = bc.run(example, tmp_path / "run", model="sim", limit=4)
    metrics = run.metrics()
    design = Design.of(run.tables)
    assert design.factors == tuple(yaml.safe_load(example.read_text())["factors"])
    assert separation_problems(metrics, design) == []
