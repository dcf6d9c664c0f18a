"""Designs too large to run are refused in one line before anything is expanded: the size is
counted (combinations of levels, then conversations), never found by listing the cells or the
conversations; `max_conversations` is the ceiling and raises it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.errors import ConfigError
from backchannel.experiment import expand, load_experiment
from backchannel.experiment._design import cell_settings, combinations

# discussion_experiment has 2 questions.
TOO_LARGE: list[tuple[dict[str, Any], str]] = [
    (
        {"replicates": 1_000_000_000},
        "2,000,000,000 conversations (1 cells, 2 items, up to 1,000,000,000 replicates)",
    ),
    (
        {"factors": {"model": ["sim"], **{f"f{i}": list(range(10)) for i in range(20)}}},
        "its factors make 100,000,000,000,000,000,000 combinations of levels (1 x 10 x 10",
    ),
    (
        {
            "factors": {"model": ["sim"], "v": ["a", "b"]},
            "replicates_by": [{"when": {"v": "b"}, "replicates": 10**12}],
        },
        "2,000,000,000,002 conversations (2 cells, 2 items, up to 1,000,000,000,000 replicates)",
    ),
    (
        {"factors": {"model": ["sim"], "a": list(range(1000)), "b": list(range(1001))}},
        "its factors make 1,001,000 combinations of levels (1 x 1,000 x 1,001)",
    ),
]


@pytest.mark.parametrize(("overrides", "size"), TOO_LARGE)
def test_a_design_above_the_ceiling_is_refused_in_one_line_with_its_size(
    overrides: dict[str, Any], size: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(**overrides))
    loaded = load_experiment(path)
    with pytest.raises(ConfigError) as raised:
        expand(loaded)
    message = str(raised.value)
    assert message.startswith(f"{path}: the design is too large to run: ")
    assert size in message
    assert "above max_conversations (1,000,000)" in message and "raise max_conversations" in message
    for options in (["--dry-run"], []):
        result = invoke("run", path, "-o", tmp_path / "run", *options)
        assert result.exit_code == 2
        assert "the design is too large to run" in result.stderr
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "run").exists()


def test_combinations_are_counted_not_listed(write_experiment: WriteExperiment) -> None:
    factors = {f"f{i}": list(range(10)) for i in range(40)}
    loaded = load_experiment(write_experiment(discussion_experiment(factors=factors)))
    assert combinations(loaded) == 10**40
    with pytest.raises(ConfigError, match="10,000,000,000,000,000,000,000,000,000,000,000,000,000"):
        cell_settings(loaded)


def test_a_design_at_the_ceiling_runs_and_the_setting_raises_it(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    # 2 cells x 2 questions x 2 replicates = 8 conversations.
    data = discussion_experiment(factors={"model": ["sim"], "v": [1, 2]}, replicates=2)
    at = load_experiment(write_experiment({**data, "max_conversations": 8}))
    assert len(expand(at)) == 8
    below = load_experiment(write_experiment({**data, "max_conversations": 7}, name="b.yaml"))
    with pytest.raises(ConfigError, match=r"8 conversations .* above max_conversations \(7\)"):
        expand(below)
    # Exclusions count: the excluded cell's 4 conversations are not in the design.
    excluded = {**data, "max_conversations": 4, "exclude": [{"v": 2}]}
    assert len(expand(load_experiment(write_experiment(excluded, name="e.yaml")))) == 4
    # The ceiling bounds the design, not what one invocation runs: --limit still needs it.
    limited = invoke("run", below.path, "-o", tmp_path / "run", "--limit", "1")
    assert limited.exit_code == 2 and "too large" in limited.stderr


def test_the_ceiling_is_no_part_of_the_experiment_a_run_resumes(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run).exit_code == 0
    raised = write_experiment({**discussion_experiment(), "max_conversations": 5_000_000})
    resumed = invoke("run", raised, "-o", run)
    assert resumed.exit_code == 0, resumed.stderr


@pytest.mark.parametrize("bad", [0, -1, "many"])
def test_a_bad_ceiling_is_a_config_error(
    bad: object, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    result = invoke(
        "run",
        write_experiment({**discussion_experiment(), "max_conversations": bad}),
        "-o",
        tmp_path / "run",
    )
    assert result.exit_code == 2 and "max_conversations" in result.stderr
