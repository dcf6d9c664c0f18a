"""Cache keys change with every output-relevant field; the cache replays stored answers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from backchannel.backends import (
    GenerationSettings,
    IntRange,
    LabelSet,
    Message,
    RawCompletion,
    Request,
    ResponseCache,
    build_client,
    cache_key,
    register_sim,
    unregister_sim,
)

BASE = Request(
    model="openai/m",
    messages=(Message("system", "s"), Message("user", "u")),
    settings=GenerationSettings(temperature=0.5, top_p=0.9, max_tokens=50),
    constraint=LabelSet(("yes", "no")),
    seed=7,
    replicate=0,
    attempt=0,
)


def test_same_request_same_key_and_critical_flag_does_not_matter() -> None:
    copy = dataclasses.replace(BASE, messages=tuple(BASE.messages))
    assert cache_key(BASE, "http://x/v1") == cache_key(copy, "http://x/v1")
    # Priority changes scheduling, not output.
    assert cache_key(BASE, "e") == cache_key(dataclasses.replace(BASE, critical=False), "e")


def test_every_output_relevant_field_changes_the_key() -> None:
    variants = {
        "model": dataclasses.replace(BASE, model="openai/other"),
        "messages": dataclasses.replace(BASE, messages=(Message("user", "u"),)),
        "role": dataclasses.replace(BASE, messages=(Message("user", "s"), Message("user", "u"))),
        "temperature": dataclasses.replace(
            BASE, settings=GenerationSettings(temperature=0.6, top_p=0.9, max_tokens=50)
        ),
        "top_p": dataclasses.replace(
            BASE, settings=GenerationSettings(temperature=0.5, top_p=0.8, max_tokens=50)
        ),
        "max_tokens": dataclasses.replace(
            BASE, settings=GenerationSettings(temperature=0.5, top_p=0.9, max_tokens=51)
        ),
        "seed": dataclasses.replace(BASE, seed=8),
        "no seed": dataclasses.replace(BASE, seed=None),
        "constraint": dataclasses.replace(BASE, constraint=LabelSet(("yes", "maybe"))),
        "constraint kind": dataclasses.replace(BASE, constraint=IntRange(0, 1)),
        "no constraint": dataclasses.replace(BASE, constraint=None),
        "replicate": dataclasses.replace(BASE, replicate=1),
        "attempt": dataclasses.replace(BASE, attempt=1),
    }
    base_key = cache_key(BASE, "http://x/v1")
    keys = {name: cache_key(request, "http://x/v1") for name, request in variants.items()}
    keys["endpoint"] = cache_key(BASE, "http://y/v1")
    for name, key in keys.items():
        assert key != base_key, name
    assert len(set(keys.values())) == len(keys)


def test_cache_file_stores_and_returns_completions(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert cache.get("k") is None
    cache.put("k", "openai/m", RawCompletion("hello", 3, 1, latency_s=0.4))
    cache.close()
    reopened = ResponseCache(tmp_path / "cache.sqlite")
    hit = reopened.get("k")
    assert hit == RawCompletion("hello", 3, 1, latency_s=0.0, cached=True)
    assert len(reopened) == 1
    reopened.close()


async def test_cached_client_replays_without_calling_the_backend(tmp_path: Path) -> None:
    calls: list[Request] = []

    def answer(request: Request) -> str:
        calls.append(request)
        return f"answer {len(calls)}"

    register_sim("cache-counter", answer)
    try:
        request = dataclasses.replace(BASE, model="sim/cache-counter", constraint=None)
        cache = ResponseCache(tmp_path / "cache.sqlite")
        client = build_client(["sim/cache-counter"], cache=cache)
        first = await client.generate(request)
        second = await client.generate(request)
        other = await client.generate(dataclasses.replace(request, replicate=1))
        assert (first.text, first.cached) == ("answer 1", False)
        assert (second.text, second.cached) == ("answer 1", True)
        assert other.text == "answer 2"
        assert len(calls) == 2
        usage = client.usage.model("sim/cache-counter")
        assert (usage.calls, usage.cache_hits) == (3, 1)
        cache.close()
    finally:
        unregister_sim("cache-counter")


def test_the_constrained_decoding_mode_is_part_of_an_openai_endpoint_cache_key(
    tmp_path: Path,
) -> None:
    """The same URL with json_schema or none sends different bodies: separate cache entries."""
    from backchannel.backends import EndpointSettings, resolve_routes

    identities = {
        mode: resolve_routes(
            ["openai/m"],
            endpoints=[EndpointSettings(base_url="http://127.0.0.1:1/v1", constrained=mode)],
        )["openai/m"].cache_identity
        for mode in ("json_schema", "grammar", "none")
    }
    assert len(set(identities.values())) == 3


def test_a_model_no_listed_endpoint_matches_is_a_config_error() -> None:
    from backchannel.backends import EndpointSettings, resolve_routes
    from backchannel.errors import ConfigError

    endpoints = [EndpointSettings(models="openai/llama-*", base_url="http://127.0.0.1:1/v1")]
    assert resolve_routes(["openai/llama-3"], endpoints=endpoints)
    with pytest.raises(ConfigError, match=r"no endpoint serves openai/qwen.*'openai/llama-\*'"):
        resolve_routes(["openai/qwen"], endpoints=endpoints)


def test_an_old_cache_file_gains_the_reasoning_columns_and_keeps_its_answers(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "cache.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, "
        "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
        "finish_reason TEXT NOT NULL, created REAL NOT NULL)"
    )
    old.execute("INSERT INTO responses VALUES ('k', 'openai/m', 'hello', 3, 1, 'stop', 0)")
    old.commit()
    old.close()
    cache = ResponseCache(path)
    assert cache.get("k") == RawCompletion("hello", 3, 1, cached=True)
    cache.put("r", "openai/m", RawCompletion("5", 2, 6, reasoning="hm", reasoning_tokens=5))
    assert cache.get("r") == RawCompletion(
        "5", 2, 6, cached=True, reasoning="hm", reasoning_tokens=5
    )
    cache.close()
    # opening it again finds the columns there
    ResponseCache(path).close()


async def test_two_constrained_modes_of_one_url_share_a_cache_file_but_not_answers(
    tmp_path: Path,
) -> None:
    from backchannel.backends import (
        EndpointSettings,
        GenerationSettings,
        JsonSchema,
        Message,
        Request,
        build_client,
    )
    from backchannel.testing import FakeOpenAIServer

    cache = ResponseCache(tmp_path / "cache.sqlite")
    schema = JsonSchema.of({"type": "object", "properties": {"n": {"type": "integer"}}})
    request = Request(
        "openai/fake-model", (Message("user", "n?"),), GenerationSettings(), schema, seed=1
    )
    async with FakeOpenAIServer() as server:
        for mode in ("json_schema", "none", "json_schema"):
            client = build_client(
                ["openai/fake-model"],
                endpoints=[EndpointSettings(base_url=server.base_url, constrained=mode)],
                cache=cache,
                max_reasks=0,
            )
            try:
                await client.generate(request)
            finally:
                await client.aclose()
    # json_schema, then none (another body: another entry), then json_schema from the cache
    assert len(server.requests) == 2
    assert "response_format" in server.requests[0] and "response_format" not in server.requests[1]
    cache.close()
