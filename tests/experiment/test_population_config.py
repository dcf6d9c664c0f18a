"""The experiment file's `population:` section: one section per paradigm's rules, validated by
the paradigm's own parameter model, recorded with its defaults; any unknown section or field is
one clear config error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from backchannel.cli import app
from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment


def _write(tmp_path: Path, population: Any, paradigm: str = "dyad") -> Path:
    data = {
        "name": "pop",
        "paradigm": paradigm,
        "settings": {"discussant_model": "sim/population", "opponent_model": "sim/population"}
        if paradigm == "dyad"
        else {"model": "sim/population"},
        "population": population,
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_section_is_recorded_with_the_paradigms_defaults(tmp_path: Path) -> None:
    loaded = load_experiment(_write(tmp_path, {"dyad": {"opponent_rate": 0.1}}))
    population = loaded.resolved()["population"]
    # Every paradigm's rules include the awareness probe's section (docs/validity.md).
    assert set(population) == {"dyad", "awareness", "models"}
    assert population["awareness"] == {"aware": 0.5}
    assert population["dyad"]["opponent_rate"] == 0.1
    assert population["dyad"]["discussant_rate"] == 0.15  # the default, written out
    assert "population" not in load_experiment(_write(tmp_path, None)).resolved()


@pytest.mark.parametrize(
    ("population", "paradigm", "message"),
    [
        ({"dyadd": {}}, "dyad", "population.dyadd: unknown field"),
        ({"dyad": {"rate": 1}}, "dyad", "population.dyad.rate: unknown field"),
        ({"dyad": {"discussant_rate": 2}}, "dyad", "population.dyad.discussant_rate: Input"),
        ({"dyad": 3}, "dyad", "population.dyad: Input should be a valid dictionary"),
        # Another paradigm's section is unknown to this one's population.
        ({"peer_pressure": {"adopt": 0.3}}, "dyad", "population.peer_pressure: unknown field"),
        ({"dyad": {}}, "discussion", "population.dyad: unknown field"),
        (
            {"models": {"x": {"dyad": {"opponent_rate": -1}}}},
            "dyad",
            "population.models.x.dyad.opponent_rate: Input",
        ),
    ],
)
def test_a_bad_section_is_one_config_error(
    tmp_path: Path, population: Any, paradigm: str, message: str
) -> None:
    path = _write(tmp_path, population, paradigm)
    with pytest.raises(
        ConfigError, match="invalid experiment file: " + message.replace(".", r"\.")
    ):
        load_experiment(path)
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()
