"""A whole run against a reasoning model: the experiment file's `generation` rules and endpoint
`extra_body` reach the server; the run store, the export and `status` hold the reasoning apart
from the answers; a bad rule is one clear error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment
from backchannel.store import RunStore

QUICK_RETRY = {"max_retries": 1, "base_delay_s": 0.0, "max_delay_s": 0.0}


def _experiment(base_url: str, **settings: Any) -> dict[str, Any]:
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": base_url, "extra_body": {"repetition_penalty": 1.05}}],
        generation=[
            {
                "models": "openai/fake-*",
                "reasoning_effort": "low",
                "stop": ["\nModerator:"],
                "extra_body": {"chat_template_kwargs": {"enable_thinking": True}},
            }
        ],
        retry=QUICK_RETRY,
        items_limit=1,
    )
    data["settings"].update(settings)
    return data


@pytest.mark.parametrize("shape", ["think_tags", "reasoning_content"])
def test_a_run_keeps_reasoning_out_of_prompts_and_in_the_store(
    shape: str,
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(reasoning=shape)
    run = tmp_path / "run"
    result = invoke("run", write_experiment(_experiment(server.base_url)), "-o", run)
    assert result.exit_code == 0, result.stderr
    requests = server.server.requests
    assert requests and all(body["reasoning_effort"] == "low" for body in requests)
    assert all(body["stop"] == ["\nModerator:"] for body in requests)
    assert all(body["repetition_penalty"] == 1.05 for body in requests)
    assert all(body["chat_template_kwargs"] == {"enable_thinking": True} for body in requests)
    prompts = [json.dumps(body["messages"]) for body in requests]
    assert not any("Private reasoning" in p or "<think>" in p for p in prompts)
    store = RunStore(run)
    try:
        events = store.tables().events
        usage = store.usage().total()
    finally:
        store.close()
    answered = events[events["model"] == "openai/fake-model"]
    assert len(answered) == len(requests)
    assert answered["reasoning"].str.startswith("Private reasoning ").all()
    assert answered["text"].str.startswith("Reply ").all()
    assert not answered["text"].str.contains("think|Private", regex=True).any()
    per_call = 8 if shape == "reasoning_content" else 0
    assert usage.reasoning_tokens == per_call * len(requests)
    assert answered["reasoning_tokens"].eq(per_call).all()
    status = invoke("status", run)
    assert status.exit_code == 0
    assert ("reasoning tokens" in status.stdout) is (shape == "reasoning_content")


def test_probes_whose_budget_ends_inside_the_reasoning_are_truncated_events(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    # the fake's reasoning is 8 words: a 5-token probe stops inside it, a 64-token turn does not
    server = threaded_server(reasoning="reasoning_content")
    data = _experiment(server.base_url, probe_max_tokens=5, max_tokens=64)
    run = tmp_path / "run"
    result = invoke("run", write_experiment(data), "-o", run)
    assert result.exit_code == 0, result.stderr
    store = RunStore(run)
    try:
        events = store.tables().events
        counts = store.counts()
        usage = store.usage().total()
    finally:
        store.close()
    probes = events[events["kind"] == "probe"]
    turns = events[(events["kind"] == "message") & (events["name"] == "turn")]
    assert len(probes) and probes["status"].eq("truncated").all()
    assert probes["text"].eq("").all() and probes["reasoning"].str.len().gt(0).all()
    assert probes["meta"].str.contains("inside its reasoning").all()
    assert turns["status"].eq("ok").all()
    # a budget problem is data, not a failed call: the conversation is done
    assert counts["done"] == 1
    assert (usage.truncated, usage.parse_failures) == (len(probes), 0)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"generation": [{"models": "*", "reasoning_effort": "max"}]}, "generation.0"),
        ({"generation": [{"models": "*", "extra_body": {"seed": 1}}]}, "may not set 'seed'"),
        ({"generation": [{"reasoning_effort": "low"}]}, "generation.0.models"),
        ({"generation": [{"models": "*", "think_tags": {"open": ""}}]}, "think_tags.open"),
        ({"endpoints": [{"extra_body": {"messages": []}}]}, "may not set 'messages'"),
    ],
)
def test_bad_generation_rules_name_the_field(
    change: dict[str, Any], words: str, write_experiment: WriteExperiment
) -> None:
    path = write_experiment(discussion_experiment(**change))
    with pytest.raises(ConfigError, match=words):
        load_experiment(path)


def test_a_bad_rule_exits_2_with_one_message(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(generation=[{"models": "*", "extra_body": {"max_tokens": 9}}])
    result = invoke("run", write_experiment(data), "-o", tmp_path / "run")
    assert result.exit_code == 2
    assert "generation.0.extra_body" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_fingerprint_covers_generation_rules_and_is_unchanged_without_them(
    write_experiment: WriteExperiment,
) -> None:
    import hashlib

    from backchannel import orchestration

    def fingerprint(data: dict[str, Any], name: str) -> str:
        return orchestration.fingerprint(load_experiment(write_experiment(data, name=name)))

    endpoint = {"models": "openai/*", "base_url": "http://127.0.0.1:9/v1"}
    plain = discussion_experiment(endpoints=[endpoint])
    # what the fingerprint of this file was before these settings existed
    loaded = load_experiment(write_experiment(plain, name="plain.yaml"))
    resolved = loaded.resolved()
    for key in ("name", "retry", "local", "generation"):
        resolved.pop(key)
    resolved.pop("max_conversations")  # added later still
    resolved.pop("stopping")  # added later still
    for key in ("base_url", "api_key_env", "max_in_flight", "timeout_s", "price", "extra_body"):
        resolved["endpoints"][0].pop(key)
    for key in ("base_urls", "adaptive_in_flight", "min_in_flight"):  # added later still
        resolved["endpoints"][0].pop(key)
    before = hashlib.sha256(json.dumps(resolved, sort_keys=True).encode()).hexdigest()
    assert fingerprint(plain, "plain.yaml") == before
    ruled = discussion_experiment(
        endpoints=[endpoint], generation=[{"models": "*", "reasoning_effort": "low"}]
    )
    bodied = discussion_experiment(endpoints=[{**endpoint, "extra_body": {"min_p": 0.1}}])
    assert len({before, fingerprint(ruled, "ruled.yaml"), fingerprint(bodied, "b.yaml")}) == 3


def test_a_generation_rule_maps_every_key_to_the_backends(
    write_experiment: WriteExperiment,
) -> None:
    from backchannel.backends import ModelSettings, ThinkTags

    rule = {
        "models": "openai/gpt-5*",
        "reasoning_effort": "minimal",
        "stop": ["END"],
        "extra_body": {"verbosity": "low"},
        "think_tags": {"open": "<r>", "close": "</r>", "opened_by_template": True},
        "own_reasoning": True,
        "max_tokens_field": "max_completion_tokens",
        "sampling": False,
    }
    off = {"models": "local/*", "think_tags": None}
    loaded = load_experiment(write_experiment(discussion_experiment(generation=[rule, off])))
    assert loaded.experiment.model_settings() == [
        ModelSettings(
            models="openai/gpt-5*",
            reasoning_effort="minimal",
            stop=("END",),
            extra_body={"verbosity": "low"},
            think_tags=ThinkTags("<r>", "</r>", opened_by_template=True),
            own_reasoning=True,
            max_tokens_field="max_completion_tokens",
            sampling=False,
        ),
        ModelSettings(models="local/*", think_tags=None),
    ]
