"""Factors a paradigm does not read, impossible cells, bad data files and --model defaults:
each is one clear config error (exit 2) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel import orchestration
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
    path = write_experiment({**PEER_PRESSURE, "factors": {"k": [0, 1], "colour": [1, 4]}})
    refused(path, tmp_path, "factors.colour", "intervention, k, k_share, max_tokens, memory_rounds")


def test_a_setting_that_holds_the_items_is_no_factor(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment({**PEER_PRESSURE, "factors": {"datasets": [["popqa"]]}})
    refused(path, tmp_path, "factors.datasets", "does not vary by cell", "settings:")


def test_a_council_factor_misspelt_is_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment({"name": "c", "paradigm": "council", "factors": {"delfi": ["none"]}})
    refused(path, tmp_path, "factors.delfi", "did you mean 'delphi'", "pool")


@pytest.mark.parametrize(
    ("level", "words"),
    [
        ("two", ["factors.k: level 'two' is not allowed", "k takes a whole number >= 0"]),
        (1.7, ["factors.k: level 1.7 is not allowed", "fractional part"]),
        (3, ["factors: the cell k=3 cannot run", "leaves no honest agent"]),
    ],
)
def test_a_bad_level_is_refused_naming_factor_level_and_allowed_values(
    write_experiment: WriteExperiment, tmp_path: Path, level: object, words: list[str]
) -> None:
    refused(write_experiment({**PEER_PRESSURE, "factors": {"k": [0, level]}}), tmp_path, *words)


def test_any_setting_varies_by_cell_and_the_cell_runs_with_it(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment({**PEER_PRESSURE, "factors": {"rounds": [1, 2]}})
    loaded = load_experiment(path, model_override="sim")
    plan = orchestration.plan(loaded)
    rounds = {key: s.rounds for key, s in plan.settings_by_cell.items()}
    assert rounds == {"rounds=1": 1, "rounds=2": 2}
    by_cell = {
        s.cell_key: loaded.paradigm.estimate(plan.settings_by_cell[s.cell_key], s.item)
        for s in plan.specs
    }
    # n = 3, k = 1: turns 3T, probes 2(T + 1).
    assert by_cell["rounds=1"].total_calls == 3 + 4
    assert by_cell["rounds=2"].total_calls == 6 + 6


@pytest.mark.parametrize(
    ("factors", "words"),
    [
        ({"agent": [2]}, ["did you mean 'agents'"]),
        ({"questions": [[]]}, ["questions does not vary by cell", "settings:"]),
        ({"agents": [11]}, ["factors.agents: level 11", "a whole number >= 1 and <= 10"]),
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
