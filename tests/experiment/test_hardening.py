"""Designs the tables could not hold: a factor named like a conversations column, and levels
whose cells would share one name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.errors import ConfigError
from backchannel.experiment import expand, load_experiment


@pytest.mark.parametrize("name", ["status", "seed", "item_id", "cell_key", "replicate"])
def test_a_factor_named_like_a_conversations_column_is_a_config_error(
    name: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(factors={"model": ["sim"], name: ["a", "b"]}))
    with pytest.raises(ConfigError) as raised:
        load_experiment(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: invalid experiment file: factors: ")
    assert f"factor name {name!r} is a column of the conversations table" in message

    result = invoke("run", path, "-o", tmp_path / "run")
    assert result.exit_code == 2
    assert "factors: " in result.stderr and repr(name) in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("levels", "name"),
    [
        # cell_key writes a non-string level as JSON and a string as itself, so each pair below
        # reads the same: 1 -> "1", true -> "true", null -> "null", 1.5 -> "1.5".
        ([1, "1"], "model=sim;variant=1"),
        ([True, "true"], "model=sim;variant=true"),
        ([None, "null"], "model=sim;variant=null"),
        ([1.5, "1.5"], "model=sim;variant=1.5"),
    ],
)
def test_levels_whose_cells_share_a_name_are_a_config_error(
    levels: list[Any], name: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(factors={"model": ["sim"], "variant": levels}))
    loaded = load_experiment(path)  # the levels differ as values ...
    with pytest.raises(ConfigError) as raised:
        expand(loaded)  # ... but not as cell names
    message = str(raised.value)
    assert message.startswith(f"{path}: factors: cells ")
    assert f"have the same name {name!r}" in message

    for options in (["--dry-run"], []):
        result = invoke("run", path, "-o", tmp_path / "run", *options)
        assert result.exit_code == 2
        assert "have the same name" in result.stderr
        assert not (tmp_path / "run").exists()


def test_distinct_cell_names_expand_and_exclusion_can_remove_a_clash(
    write_experiment: WriteExperiment,
) -> None:
    # [1, "x"]: 2 cells x 2 questions x 1 replicate = 4 conversations with 4 distinct ids.
    mixed = load_experiment(
        write_experiment(discussion_experiment(factors={"model": ["sim"], "variant": [1, "x"]}))
    )
    ids = [spec.conversation_id for spec in expand(mixed)]
    assert ids == [
        "model=sim;variant=1/q1/0",
        "model=sim;variant=1/q2/0",
        "model=sim;variant=x/q1/0",
        "model=sim;variant=x/q2/0",
    ]
    # [1, "1"] minus the cell with "1" leaves one cell, which clashes with nothing.
    excluded = load_experiment(
        write_experiment(
            discussion_experiment(
                factors={"model": ["sim"], "variant": [1, "1"]}, exclude=[{"variant": "1"}]
            ),
            name="excluded.yaml",
        )
    )
    specs = expand(excluded)
    assert [spec.cell for spec in specs] == [{"model": "sim", "variant": 1}] * 2
