"""Cells come from the design: every testimony setting a factor may vary, used as a two-level
factor, gives per-cell rows for both levels and nothing averaged over unnamed; the examples
pass the paradigm check and separate their own factors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, separation_problems
from backchannel.paradigms.testimony import Testimony
from backchannel.testing import check_paradigm

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TESTIMONY_EXAMPLES = ("testimony", "testimony_interventions", "testimony_offline")

LEVELS: dict[str, list[Any]] = {
    "model": ["sim", "sim#other"],
    "key_model": [None, "sim#other"],
    "second_key_model": [None, "sim#other"],
    "member_model": [None, "sim#other"],
    "observer_model": [None, "sim#other"],
    "condition": ["C0", "C1"],
    "intervention": ["none", "passive_observers"],
    "temperature": [0.0, 0.5],
    "max_tokens": [64, 128],
    "vote_max_tokens": [16, 32],
    "off_the_record": [False, True],
    "awareness_probe": [False, True],
    "awareness_model": ["sim", "sim#other"],
}
"""Two valid levels of every setting a factor may vary (in C1, where observers join)."""


@pytest.mark.slow
def test_every_setting_as_a_two_level_factor_gives_rows_per_level(tmp_path: Path) -> None:
    experiment = tmp_path / "small.yaml"
    experiment.write_text(
        yaml.safe_dump(
            {
                "name": "every-factor",
                "paradigm": "testimony",
                "seed": 3,
                "settings": {
                    "model": "sim",
                    "condition": "C1",
                    "generate": {"count": 2, "moves": [3], "seed": 5},
                    "rounds": ["Round R1. Share what you know."],
                    "observers": 2,
                    "awareness_model": "sim",
                },
            }
        )
    )
    assert set(LEVELS) == set(Testimony.factors())  # every setting that can be a factor
    assert check_paradigm(experiment, tmp_path / "check", factors=LEVELS) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", TESTIMONY_EXAMPLES)
def test_the_examples_pass_the_paradigm_check_and_separate_their_factors(
    name: str, tmp_path: Path
) -> None:
    example = EXAMPLES / f"{name}.yaml"
    assert check_paradigm(example, tmp_path / "check", limit=4) == []
    run = bc.run(example, tmp_path / "run", model="sim", limit=4)
    design = Design.of(run.tables)
    assert design.factors == tuple(yaml.safe_load(example.read_text())["factors"])
    assert separation_problems(run.metrics(), design) == []


@pytest.mark.slow
def test_the_offline_example_passes_the_paradigm_check_on_its_simulated_population(
    tmp_path: Path,
) -> None:
    example = EXAMPLES / "testimony_offline.yaml"
    assert check_paradigm(example, tmp_path / "check", model="sim/population", limit=4) == []
