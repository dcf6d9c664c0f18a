"""Every dyad setting that can be a factor separates in the metrics, and the example passes
the paradigm check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from backchannel.paradigms.dyad import Dyad
from backchannel.testing import check_paradigm

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "dyad.yaml"

# Two valid levels of every setting a factor may vary (`memory_rounds` includes null, which a
# factor column would turn into NaN beside a number: rows must carry the level as declared).
LEVELS: dict[str, list[Any]] = {
    "discussant_model": ["sim#a", "sim#b"],
    "opponent_model": ["sim#a", "sim#b"],
    "stance": ["human", "natural"],
    "style": ["manipulative", "plain"],
    "wording": ["first", "opposite"],
    "rounds": [1, 2],
    "memory_rounds": [None, 1],
    "temperature": [0.2, 0.9],
    "max_tokens": [64, 128],
    "rating_max_tokens": [4, 8],
    "off_the_record": [False, True],
    "awareness_probe": [False, True],
    "awareness_model": ["sim", "sim#other"],
}


def test_the_levels_cover_every_setting_a_factor_may_vary() -> None:
    assert set(LEVELS) == Dyad.factors()


@pytest.mark.slow
def test_every_setting_as_a_two_level_factor_gives_one_row_per_level(tmp_path: Path) -> None:
    experiment = {
        "name": "dyad-factors",
        "paradigm": "dyad",
        "seed": 3,
        "replicates": 1,
        "factors": {"style": ["manipulative", "plain"]},
        "settings": {
            "rounds": 1,
            "discussant_model": "sim",
            "opponent_model": "sim",
            "awareness_model": "sim",
        },
    }
    path = tmp_path / "dyad.yaml"
    path.write_text(yaml.safe_dump(experiment))
    assert check_paradigm(path, tmp_path / "check", factors=LEVELS) == []


@pytest.mark.slow
def test_the_example_passes_the_paradigm_check(tmp_path: Path) -> None:
    assert check_paradigm(EXAMPLE, tmp_path, factors={"rounds": [1, 2]}, limit=4) == []
