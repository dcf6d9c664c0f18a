"""Experiment files: every kind of mistake is a ConfigError naming the file and field path."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment, override_models


def error_of(path: Path, **options: str) -> str:
    with pytest.raises(ConfigError) as raised:
        load_experiment(path, **options)
    return str(raised.value)


@pytest.mark.parametrize(
    ("change", "location", "words"),
    [
        ({"nmae": "typo"}, "nmae", "unknown field"),
        ({"replicates": "two"}, "replicates", "valid integer"),
        ({"replicates": 0}, "replicates", "greater than or equal to 1"),
        ({"factors": {"model": []}}, "factors", "factor 'model' has no levels"),
        ({"factors": {"model": ["sim", "sim"]}}, "factors", "repeats a level"),
        ({"factors": {"model": ["gpt-4o"]}}, "factors.model.0", "not 'provider/model'"),
        ({"exclude": [{"modle": "sim"}]}, "exclude.0", "unknown factors ['modle']"),
        ({"endpoints": [{"base_url": "http://x/v1", "key": "k"}]}, "endpoints.0.key", "unknown"),
        ({"retry": {"max_retries": -1}}, "retry.max_retries", "greater than or equal to 0"),
    ],
)
def test_mistakes_name_the_file_and_the_field(
    write_experiment: WriteExperiment, change: dict[str, object], location: str, words: str
) -> None:
    path = write_experiment(discussion_experiment(**change))
    message = error_of(path)
    assert message.startswith(f"{path}: ")
    assert f": {location}: " in message
    assert words in message


def test_paradigm_settings_are_checked_under_settings(write_experiment: WriteExperiment) -> None:
    data = discussion_experiment()
    data["settings"] = {"agnets": 3, "rounds": "many", "model": "sim/"}
    message = error_of(write_experiment(data))
    assert "settings.agnets: unknown field" in message
    assert "settings.rounds: Input should be a valid integer" in message


def test_bad_model_in_settings_names_its_path(write_experiment: WriteExperiment) -> None:
    data = discussion_experiment(factors={})
    data["settings"]["model"] = "llama3"
    assert ": settings.model: model 'llama3'" in error_of(write_experiment(data))


def test_unknown_paradigm(write_experiment: WriteExperiment) -> None:
    path = write_experiment(discussion_experiment(paradigm="debate"))
    message = error_of(path)
    assert message.startswith(f"{path}: paradigm: unknown paradigm 'debate'; choose one of: ")
    assert "discussion" in message


def test_not_yaml_not_a_mapping_and_missing_file(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    assert "not valid YAML" in error_of(write_experiment("name: [unclosed"))
    assert "must be a mapping" in error_of(write_experiment("- a\n- b\n"))
    assert "no such experiment file" in error_of(tmp_path / "missing.yaml")


def test_model_override_replaces_every_model_key_and_is_checked(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(factors={"model": ["sim/a", "sim/b"], "agents": [2, 3]})
    loaded = load_experiment(write_experiment(data), model_override="sim")
    # Distinct models stay distinct simulated models, so the design keeps its cells.
    assert loaded.experiment.factors == {"model": ["sim#a", "sim#b"], "agents": [2, 3]}
    merged = load_experiment(write_experiment(data), model_override="openai/m")
    assert merged.experiment.factors == {"model": ["openai/m"], "agents": [2, 3]}
    assert "not 'provider/model'" in error_of(write_experiment(data), model_override="gpt")
    nested = {"judge_model": "x/y", "pairs": [{"models": ["a/b", "c/d"]}], "label": "keep"}
    assert override_models(nested, "sim") == {
        "judge_model": "sim",
        "pairs": [{"models": ["sim"]}],
        "label": "keep",
    }


def test_resolved_config_fills_defaults_and_drops_the_literal_key(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(endpoints=[{"base_url": "http://h/v1", "api_key": "sk-secret"}])
    loaded = load_experiment(write_experiment(data))
    resolved = loaded.resolved()
    assert resolved["settings"]["memory_rounds"] == 5  # a paradigm default
    assert resolved["replicates"] == 1
    assert "api_key" not in resolved["endpoints"][0]
    assert "sk-secret" not in repr(resolved)
