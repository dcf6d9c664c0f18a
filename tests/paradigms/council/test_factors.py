"""Every council setting that can be a factor separates in the metrics, and both examples pass
the paradigm check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from backchannel.paradigms.council import Council
from backchannel.testing import check_paradigm

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

FAIRNESS = {"name": "fairness", "definition": "Treat everyone affected equitably."}
CARE = {"name": "care", "definition": "Protect the most vulnerable.", "keywords": ["care"]}
# Two valid levels of every setting a factor may vary; null and list levels included, which
# rows must carry exactly as declared.
LEVELS: dict[str, list[Any]] = {
    "pool": ["A", "B"],
    "single_model": ["sim#a", "sim#b"],
    "pool_models": [["sim#a", "sim#b"], ["sim#c", "sim#d", "sim#e"]],
    "verifier_model": [None, "sim#v"],
    "verify": [True, False],
    "seventh_value": [FAIRNESS, CARE],
    "allow_shared_values": [True, False],
    "evaluators": [None, ["safety", "risk_tolerance", "creativity"]],
    "profiling": [True, False],
    "profiling_distinct": [True, False],
    "delphi": ["none", "partner_critique"],
    "threshold": [0.5, 0.9],
    "advocate_words": [60, 150],
    "rationale_words": [60, 120],
    "profile_words": [60, 150],
    "temperature": [0.2, 0.7],
    "advocate_max_tokens": [200, 320],
    "evaluator_max_tokens": [300, 400],
    "verifier_max_tokens": [16, 32],
    "profile_max_tokens": [200, 320],
    "off_the_record": [False, True],
    "awareness_probe": [False, True],
    "awareness_model": ["sim", "sim#other"],
}


def test_the_levels_cover_every_setting_a_factor_may_vary() -> None:
    assert set(LEVELS) == Council.factors()


@pytest.mark.slow
def test_every_setting_as_a_two_level_factor_gives_one_row_per_level(tmp_path: Path) -> None:
    # The example with an awareness judge, so that `awareness_probe` can be a factor alone.
    data = yaml.safe_load((EXAMPLES / "council_housing.yaml").read_text())
    data["settings"]["awareness_model"] = "sim"
    example = tmp_path / "council_housing.yaml"
    example.write_text(yaml.safe_dump(data))
    assert check_paradigm(example, tmp_path / "check", factors=LEVELS, limit=2) == []


@pytest.mark.slow
def test_the_child_welfare_example_passes_the_paradigm_check(tmp_path: Path) -> None:
    example = EXAMPLES / "council_child_welfare.yaml"
    assert check_paradigm(example, tmp_path, factors={"pool": ["A", "B"]}, limit=4) == []
