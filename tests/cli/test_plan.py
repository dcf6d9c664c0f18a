"""`backchannel plan`: the table, the implied calls, tokens and cost, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import invoke

from backchannel.planning import Assumption, proportion_sd, units_for_power


def _experiment(tmp_path: Path, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "name": "pp-plan",
        "paradigm": "peer_pressure",
        "seed": 3,
        "factors": {"k": [0, 1]},
        "settings": {
            "model": "openai/m",
            "datasets": [{"name": "counterfact", "limit": 5}],
            "n_agents": 4,
            "rounds": 2,
            "reask": {"checkpoints": [], "items": 0},
            "judge": {"kind": "rule"},
        },
        "endpoints": [
            {
                "models": "openai/*",
                "base_url": "http://127.0.0.1:9/v1",
                "price": {"prompt_per_million": 1.0, "completion_per_million": 2.0},
            }
        ],
        **extra,
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_plan_from_stated_rates_sizes_the_design(tmp_path: Path) -> None:
    path = _experiment(tmp_path)
    args = ["--power", "0.8", "--effect", "0.2"]
    args += ["--assume", "fpi_gap.second=0.05", "--assume", "fpi_gap.first=0.05"]
    result = invoke("plan", path, *args, "--json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    (row,) = plan["rows"]
    expected = units_for_power(
        Assumption("proportion", 0.25, 0.05, proportion_sd(0.25), proportion_sd(0.05)), 0.8
    )
    assert row["units_per_arm"] == row["conversations_per_cell"] == expected
    assert row["first"] == pytest.approx(0.25) and row["power"] >= 0.8
    # 5 items per cell: the replicates that reach the conversations per cell, over 2 cells.
    replicates = -(-expected // 5)
    assert plan["replicates"] == replicates
    assert plan["conversations"] == 2 * 5 * replicates
    dry = invoke("run", path, "-o", tmp_path / "run", "--dry-run")
    assert dry.exit_code == 0
    price = plan["prompt_tokens"] * 1e-6 + plan["completion_tokens"] * 2e-6
    assert plan["cost"] == pytest.approx(price, rel=1e-3)
    text = invoke("plan", path, *args)
    assert "fpi_gap" in text.output and "estimated cost: $" in text.output
    assert "fpi_gap: Final private infection with one adversary minus none" in text.output
    assert plan["contrasts"] == {"fpi_gap": "Final private infection with one adversary minus none"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a target half-width or a target power"),
        (["--power", "0.8"], "needs the effect"),
        (["--halfwidth", "0.1", "--simulate", "100"], "draws runs from a pilot"),
        (["--halfwidth", "0.05"], "state fpi_gap.first and fpi_gap.second"),
        (["--halfwidth", "0.05", "--assume", "fpi_gap.rate=1"], "no key 'rate'"),
        (["--halfwidth", "0.05", "--assume", "gap.first=1"], "no contrast 'gap'"),
        (["--halfwidth", "0.05", "--assume", "fpi_gap.first=x"], "is not a number"),
        (
            ["--halfwidth", "0.05", "--assume", "fpi_gap.first=2", "--assume", "fpi_gap.second=0"],
            "rates lie between 0 and 1",
        ),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = invoke("plan", _experiment(tmp_path), *args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_design_without_the_arms_has_no_contrast(tmp_path: Path) -> None:
    result = invoke("plan", _experiment(tmp_path, factors={"k": [1, 3]}), "--halfwidth", "0.1")
    assert result.exit_code != 0 and "no headline contrast" in result.output


def test_plan_from_a_pilot(tmp_path: Path) -> None:
    path = _experiment(
        tmp_path,
        replicates=2,
        endpoints=[],
        settings={
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 4}],
            "n_agents": 4,
            "rounds": 2,
            "reask": {"checkpoints": [], "items": 0},
            "judge": {"kind": "llm", "model": "sim/population"},
        },
    )
    assert invoke("run", path, "-o", tmp_path / "pilot").exit_code == 0
    result = invoke("plan", path, "--pilot", tmp_path / "pilot", "--halfwidth", "0.1", "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["rows"]
    assert row["source"] == "pilot" and row["second"] == 0.0
    assert row["halfwidth"] <= 0.1
    wrong = invoke("plan", path, "--pilot", tmp_path / "nowhere", "--halfwidth", "0.1")
    assert wrong.exit_code != 0 and "Traceback" not in wrong.output


def test_a_pilot_stratum_the_design_does_not_run_is_named(tmp_path: Path) -> None:
    settings = {
        "datasets": [{"name": "counterfact", "limit": 4}],
        "n_agents": 3,
        "rounds": 1,
        "reask": {"checkpoints": [], "items": 0},
        "judge": {"kind": "rule"},
    }
    models = ["sim/population", "sim/population#other"]
    pilot = _experiment(
        tmp_path, replicates=2, endpoints=[], factors={"model": models, "k": [0, 1]},
        settings=settings,
    )  # fmt: skip
    assert invoke("run", pilot, "-o", tmp_path / "pilot").exit_code == 0
    design = tmp_path / "one-model.yaml"
    data = yaml.safe_load(pilot.read_text())
    data["factors"]["model"] = models[:1]
    design.write_text(yaml.safe_dump(data))
    result = invoke("plan", design, "--pilot", tmp_path / "pilot", "--halfwidth", "0.2", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert {r["stratum"].get("model") for r in found["rows"]} == {models[0]}
    (note,) = found["left_out"]
    assert note.startswith(f"fpi_gap (model={models[1]})") and "not sized" in note
    printed = invoke("plan", design, "--pilot", tmp_path / "pilot", "--halfwidth", "0.2")
    assert f"left out: fpi_gap (model={models[1]})" in printed.output
