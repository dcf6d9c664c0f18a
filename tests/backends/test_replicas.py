"""Replicas behind one model, over real HTTP to several fake servers on 127.0.0.1: conversation
affinity, least-loaded choice, per-replica bounds, draining, re-probing and brace patterns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from backchannel.backends import (
    EndpointSettings,
    LLMClient,
    Message,
    Request,
    RetryPolicy,
    build_client,
)
from backchannel.backends._replica_urls import expand_braces
from backchannel.testing import FakeOpenAIServer

MODEL = "openai/fake-model"
FAST = RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05)


def client_for(servers: Sequence[FakeOpenAIServer], **endpoint: Any) -> LLMClient:
    settings = EndpointSettings(base_urls=tuple(s.base_url for s in servers), **endpoint)
    return build_client([MODEL], endpoints=[settings], retry=FAST)


def ask(conversation: str, call: int) -> Request:
    return Request(MODEL, (Message("user", f"{conversation} call {call}"),), seed=call)


def served_by(servers: Sequence[FakeOpenAIServer], conversation: str) -> set[int]:
    """Which servers received a request of `conversation`."""
    return {
        index
        for index, server in enumerate(servers)
        for body in server.requests
        if body["messages"][-1]["content"].startswith(f"{conversation} ")
    }


@pytest.fixture
async def servers() -> AsyncIterator[list[FakeOpenAIServer]]:
    started = [FakeOpenAIServer(latency=0.01, slots=4) for _ in range(3)]
    for server in started:
        await server.start()
    yield started
    for server in started:
        await server.stop()


async def converse(client: LLMClient, key: str, calls: int) -> list[str]:
    with client.conversation(key):
        return [(await client.generate(ask(key, i))).status for i in range(calls)]


def test_brace_patterns_name_every_replica() -> None:
    assert expand_braces("http://gpu{1..2}:{8000..8001}/v1") == [
        "http://gpu1:8000/v1",
        "http://gpu1:8001/v1",
        "http://gpu2:8000/v1",
        "http://gpu2:8001/v1",
    ]
    assert expand_braces("http://{a,b}.lan/v1") == ["http://a.lan/v1", "http://b.lan/v1"]
    assert expand_braces("http://n{08..10}/v1") == [
        "http://n08/v1",
        "http://n09/v1",
        "http://n10/v1",
    ]
    settings = EndpointSettings(base_urls=("http://h:{1..3}/v1",))
    assert settings.urls == ("http://h:1/v1", "http://h:2/v1", "http://h:3/v1")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"base_url": "http://a/v1", "base_urls": ["http://b/v1"]}, "not both"),
        ({"base_urls": ["http://a/v1", "http://a/v1"]}, "listed twice"),
        ({"base_urls": ["gpu1:8000"]}, "must start with http"),
        ({"base_urls": ["http://h:{9..1}/v1"]}, "empty range"),
        ({"base_urls": ["http://h:{x}/v1"]}, "neither a range"),
        ({"adaptive_in_flight": True, "min_in_flight": 9, "max_in_flight": 8}, "above"),
    ],
)
def test_bad_replica_settings_are_refused_with_the_reason(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        TypeAdapter(EndpointSettings).validate_python(fields)


async def test_each_conversation_keeps_to_one_replica_and_they_spread_evenly(
    servers: list[FakeOpenAIServer],
) -> None:
    client = client_for(servers)
    try:
        keys = [f"c{i}" for i in range(6)]
        results = await asyncio.gather(*(converse(client, key, 5) for key in keys))
    finally:
        await client.aclose()
    assert all(status == "ok" for statuses in results for status in statuses)
    homes = [served_by(servers, key) for key in keys]
    assert all(len(home) == 1 for home in homes)
    # Least loaded at start: six conversations at once over three replicas, two on each.
    assert sorted(len(server.requests) for server in servers) == [10, 10, 10]
    stats = client.replica_stats()
    assert [s.calls for s in stats] == [10, 10, 10] and all(s.healthy for s in stats)


async def test_in_flight_calls_are_bounded_per_replica(servers: list[FakeOpenAIServer]) -> None:
    client = client_for(servers, max_in_flight=2)
    try:
        await asyncio.gather(*(converse(client, f"c{i}", 3) for i in range(30)))
    finally:
        await client.aclose()
    assert all(0 < server.max_in_flight <= 2 for server in servers)


async def test_a_stopped_replica_is_drained_its_calls_go_elsewhere_and_it_comes_back(
    servers: list[FakeOpenAIServer],
) -> None:
    client = client_for(servers)
    try:
        first = await asyncio.gather(*(converse(client, f"a{i}", 2) for i in range(3)))
        victim = next(i for i, s in enumerate(servers) if served_by(servers, "a0") == {i})
        port = int(servers[victim].base_url.rsplit(":", 1)[1].split("/")[0])
        await servers[victim].stop()
        # a0's next call finds its replica gone: it moves, and the run goes on.
        with client.conversation("a0") as affinity:
            statuses = [(await client.generate(ask("a0", i))).status for i in range(2, 5)]
        assert statuses == ["ok", "ok", "ok"] and affinity.moves == 1
        assert len(set(affinity.calls)) == 1
        assert servers[victim].base_url not in affinity.calls
        stats = client.replica_stats()
        assert not stats[victim].healthy and stats[victim].drains == 1
        # New conversations avoid the drained replica.
        await asyncio.gather(*(converse(client, f"b{i}", 2) for i in range(4)))
        assert all(victim not in served_by(servers, f"b{i}") for i in range(4))
        # Restarted on its port, the replica is found again by the background probe.
        servers[victim] = FakeOpenAIServer(latency=0.01, slots=4, port=port)
        await servers[victim].start()
        for _ in range(100):
            if client.replica_stats()[victim].healthy:
                break
            await asyncio.sleep(0.05)
        assert client.replica_stats()[victim].healthy
    finally:
        await client.aclose()
    assert all(status == "ok" for statuses in first for status in statuses)


async def test_repeated_server_errors_drain_a_replica_but_rate_limits_do_not() -> None:
    failing = FakeOpenAIServer(faults=[("status", 500)] * 3)
    limited = FakeOpenAIServer(faults=[("status", 429, 0)] * 3)
    async with failing, limited:
        for server, drained in ((failing, True), (limited, False)):
            healthy = FakeOpenAIServer()
            async with healthy:
                client = client_for([server, healthy])
                try:
                    with client.conversation("x"):
                        completion = await client.generate(ask("x", 0))
                    stats = client.replica_stats()
                finally:
                    await client.aclose()
                assert completion.status == "ok"
                assert stats[0].healthy is not drained
                # A 429 is retried where the conversation is; three 500s move it.
                assert (stats[0].calls, stats[1].calls) == ((0, 1) if drained else (1, 0))


async def test_every_replica_down_stops_the_run_with_the_reason() -> None:
    from backchannel.errors import BackendUnavailable

    servers = [FakeOpenAIServer(), FakeOpenAIServer()]
    for server in servers:
        await server.start()
    client = client_for(servers)
    for server in servers:
        await server.stop()
    try:
        with pytest.raises(BackendUnavailable, match="unreachable"), client.conversation("x"):
            await client.generate(ask("x", 0))
        assert not any(s.healthy for s in client.replica_stats())
    finally:
        await client.aclose()


async def test_answers_are_cached_under_the_replica_set_not_the_replica(
    servers: list[FakeOpenAIServer], tmp_path: Any
) -> None:
    from backchannel.backends import ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite")
    settings = EndpointSettings(base_urls=tuple(s.base_url for s in servers))
    try:
        for keys in (["a", "b", "c"], ["c", "b", "a"]):
            client = build_client([MODEL], endpoints=[settings], retry=FAST, cache=cache)
            try:
                await asyncio.gather(*(converse(client, key, 2) for key in keys))
            finally:
                await client.aclose()
    finally:
        cache.close()
    assert sum(len(server.requests) for server in servers) == 6


def test_a_replica_url_with_user_info_is_refused_before_anything_is_built() -> None:
    from backchannel.backends import resolve_routes
    from backchannel.errors import ConfigError

    settings = EndpointSettings(base_urls=("http://a:1/v1", "http://alice:hunter2@b:2/v1"))
    with pytest.raises(ConfigError, match="base_urls") as caught:
        resolve_routes([MODEL], endpoints=[settings])
    assert "hunter2" not in str(caught.value)
