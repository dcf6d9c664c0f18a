"""Every field of a `generation:` rule is checked when the file is loaded, with its place in the
file: what the backends would refuse later (equal think tags) is refused at load, never as a
traceback during the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment

BAD_RULES: list[tuple[list[dict[str, Any]], str]] = [
    (
        [{"models": "*", "think_tags": {"open": "<t>", "close": "<t>"}}],
        "generation.0.think_tags: open and close are both '<t>'; the closing tag must differ",
    ),
    (
        [{"models": "*", "think_tags": {"open": "<think>", "close": "<think>"}}],
        "generation.0.think_tags: open and close are both '<think>'",
    ),
    (
        [{"models": "*", "think_tags": {"open": " ", "close": "</t>"}}],
        "generation.0.think_tags.open: a think tag must hold more than spaces",
    ),
    (
        [{"models": "*", "think_tags": {"open": "<t>", "close": "\n"}}],
        "generation.0.think_tags.close: a think tag must hold more than spaces",
    ),
    (
        [{"models": "*", "think_tags": {"open": "", "close": "</t>"}}],
        "generation.0.think_tags.open: String should have at least 1 character",
    ),
    (
        [{"models": "*", "think_tags": {"open": "<t>", "close": "</t>", "colour": 1}}],
        "generation.0.think_tags.colour: unknown field",
    ),
    ([{"models": ""}], "generation.0.models: String should have at least 1 character"),
    ([{"reasoning_effort": "low"}], "generation.0.models: Field required"),
    ([{"models": "*", "reasoning_effort": "max"}], "generation.0.reasoning_effort: must be one"),
    ([{"models": "*", "stop": [""]}], "generation.0.stop: stop sequences must be non-empty"),
    ([{"models": "*", "stop": ["###", "###"]}], "generation.0.stop: repeats the stop sequence"),
    ([{"models": "*", "stop": "###"}], "generation.0.stop: Input should be a valid list"),
    ([{"models": "*", "extra_body": {"seed": 3}}], "generation.0.extra_body: extra_body may not"),
    ([{"models": "*", "extra_body": {"x": float("nan")}}], "extra_body must hold only JSON"),
    ([{"models": "*", "own_reasoning": "maybe"}], "generation.0.own_reasoning: Input should be"),
    ([{"models": "*", "sampling": "no way"}], "generation.0.sampling: Input should be"),
    ([{"models": "*", "max_tokens_field": "limit"}], "generation.0.max_tokens_field: must be one"),
    ([{"models": "*", "temperature": 0.2}], "generation.0.temperature: unknown field"),
    (
        [{"models": "openai/*"}, {"models": "openai/*", "stop": ["x"]}],
        "generation: rule 1 repeats the models glob 'openai/*' of rule 0; the first matching "
        "rule wins, so this one would never apply",
    ),
]


@pytest.mark.parametrize(("rules", "message"), BAD_RULES)
def test_a_bad_generation_rule_is_refused_when_the_file_is_loaded(
    rules: list[dict[str, Any]], message: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(generation=rules))
    with pytest.raises(ConfigError) as raised:
        load_experiment(path)
    assert str(raised.value).startswith(f"{path}: invalid experiment file: ")
    assert message in str(raised.value)
    assert "Value error" not in str(raised.value)
    for options in (["--dry-run"], []):
        result = invoke("run", path, "-o", tmp_path / "run", *options)
        assert result.exit_code == 2
        assert message in result.stderr.replace("\n", " ")
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "run").exists()


def test_good_rules_load_into_the_settings_the_backends_take(
    write_experiment: WriteExperiment,
) -> None:
    rules = [
        {"models": "openai/qwen3-*", "think_tags": {"open": "<reason>", "close": "</reason>"}},
        {"models": "openai/*", "think_tags": None, "stop": ["\n\n", "###"]},
    ]
    loaded = load_experiment(write_experiment(discussion_experiment(generation=rules)))
    first, second = loaded.experiment.model_settings()
    assert first.think_tags is not None and first.think_tags.close == "</reason>"
    assert second.think_tags is None and second.stop == ("\n\n", "###")
