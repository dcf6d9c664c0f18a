"""Factors a paradigm does not read, impossible cells, bad data files and --model defaults:
each is one clear config error (exit 2) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.experiment import load_experiment

PEER_PRESSURE = {
    "name": "pp",
    "paradigm": "peer_pressure",
    "settings": {
        "datasets": [{"name": "counterfact", "limit": 1}],
        "n_agents": 3,
        "k": 1,
        "rounds": 1,
        "judge": {"kind": "rule"},
    },
}


def refused(path: Path, tmp_path: Path, *words: str) -> None:
    run = tmp_path / "run"
    result = invoke("run", path, "-o", run, "--model", "sim")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr
    assert not run.exists()


def test_a_factor_peer_pressure_does_not_read_is_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment({**PEER_PRESSURE, "factors": {"k": [0, 1], "rounds": [1, 4]}})
    refused(path, tmp_path, "factors.rounds", "dataset, k, model, n_agents")


def test_a_council_factor_misspelt_is_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment({"name": "c", "paradigm": "council", "factors": {"delfi": ["none"]}})
    refused(path, tmp_path, "factors.delfi", "delphi, pool")


@pytest.mark.parametrize(
    ("factors", "words"),
    [
        ({"agent": [2]}, ["did you mean 'agents'"]),
        ({"rounds": [1, 2]}, ["rounds does not vary by cell", "settings:"]),
        ({"agents": [11]}, ["agents must be a whole number from 1 to 10"]),
    ],
)
def test_discussion_factors_that_cannot_work_are_refused(
    write_experiment: WriteExperiment, tmp_path: Path, factors: dict, words: list[str]
) -> None:
    refused(write_experiment(discussion_experiment(factors=factors)), tmp_path, *words)


def test_a_discussion_label_factor_is_kept(write_experiment: WriteExperiment) -> None:
    loaded = load_experiment(write_experiment(discussion_experiment(factors={"block": [1, 2]})))
    assert loaded.experiment.factors == {"block": [1, 2]}


def test_a_malformed_dataset_row_is_one_clear_message(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(
        '{"id": "a", "question": "Capital of France?", "answer": "Paris", '
        '"false_answer": "Lyon"}\n{"id": "b"}\n'
    )
    source = {"name": "mine", "path": str(data), "format": "items"}
    settings = {**PEER_PRESSURE["settings"], "datasets": [source]}
    path = write_experiment({**PEER_PRESSURE, "settings": settings})
    refused(path, tmp_path, str(data), "settings:")


def test_model_override_replaces_a_default_model_the_file_left_out(
    write_experiment: WriteExperiment,
) -> None:
    loaded = load_experiment(write_experiment(dict(PEER_PRESSURE)), model_override="sim")
    assert loaded.settings.model == "sim"
