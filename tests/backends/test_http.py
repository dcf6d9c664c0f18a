"""The OpenAI-compatible backend through real HTTP on 127.0.0.1, with the real `openai` SDK,
against the fake server's scripted faults."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any

import pytest

from backchannel.backends import (
    EndpointSettings,
    IntRange,
    JsonSchema,
    LLMClient,
    Message,
    Request,
    RetryPolicy,
    build_client,
)
from backchannel.errors import BackendUnavailable
from backchannel.testing import FakeOpenAIServer, default_content

MODEL = "openai/fake-model"
FAST = RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=0.05)


def client_for(
    base_url: str,
    *,
    api_key: str = "sk-test",
    retry: RetryPolicy = FAST,
    timeout_s: float = 5.0,
    constrained: Any = "json_schema",
) -> LLMClient:
    endpoint = EndpointSettings(
        base_url=base_url, api_key=api_key, timeout_s=timeout_s, constrained=constrained
    )
    return build_client([MODEL], endpoints=[endpoint], retry=retry)


def ask(text: str = "Hello?", constraint: Any = None) -> Request:
    return Request(MODEL, (Message("user", text),), constraint=constraint, seed=1)


async def serve(faults: Sequence[Any] = (), **options: Any) -> FakeOpenAIServer:
    server = FakeOpenAIServer(faults=faults, **options)
    await server.start()
    return server


async def test_rate_limit_is_retried_after_the_servers_retry_after() -> None:
    server = await serve([("status", 429, 0.3)])
    client = client_for(server.base_url)
    try:
        started = time.perf_counter()
        completion = await client.generate(ask())
        elapsed = time.perf_counter() - started
    finally:
        await client.aclose()
        await server.stop()
    assert completion.status == "ok" and completion.text.startswith("Reply ")
    assert completion.retries == 1
    # Jitter alone is at most 0.01 s; the wait honours the server's 0.3 s.
    assert elapsed >= 0.3
    assert len(server.requests) == 2 and server.requests_served == 1
    assert client.usage.model(MODEL).retries == 1


async def test_server_errors_are_retried() -> None:
    server = await serve([("status", 500), ("status", 503)])
    client = client_for(server.base_url)
    try:
        completion = await client.generate(ask())
    finally:
        await client.aclose()
        await server.stop()
    assert (completion.status, completion.retries) == ("ok", 2)
    assert server.requests_served == 1


async def test_timeouts_are_retried() -> None:
    server = await serve([("delay", 1.0)])
    client = client_for(server.base_url, timeout_s=0.2)
    try:
        completion = await client.generate(ask())
    finally:
        await client.aclose()
        await server.stop()
    assert (completion.status, completion.retries) == ("ok", 1)


async def test_exhausted_retries_become_an_error_completion_not_an_exception() -> None:
    server = await serve([("status", 500)] * 3)
    client = client_for(server.base_url, retry=RetryPolicy(2, 0.0, 0.0))
    try:
        completion = await client.generate(ask())
    finally:
        await client.aclose()
        await server.stop()
    assert completion.status == "error" and completion.value is None
    assert completion.error is not None and "500" in completion.error
    assert completion.retries == 2 and len(server.requests) == 3
    usage = client.usage.model(MODEL)
    assert (usage.failures, usage.retries) == (1, 2)


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_connection_refused_is_backend_unavailable_with_a_clear_message() -> None:
    client = client_for(f"http://127.0.0.1:{closed_port()}/v1", retry=RetryPolicy(1, 0.0, 0.0))
    try:
        with pytest.raises(BackendUnavailable, match="cannot connect") as raised:
            await client.generate(ask())
    finally:
        await client.aclose()
    assert "unreachable after 1 retries" in str(raised.value)
    assert "base_url" in str(raised.value)


async def test_wrong_api_key_is_backend_unavailable_naming_the_fix() -> None:
    server = await serve(require_api_key="sk-right")
    client = client_for(server.base_url, api_key="sk-wrong")
    try:
        with pytest.raises(BackendUnavailable, match=r"refused the API key \(401\)") as raised:
            await client.generate(ask())
    finally:
        await client.aclose()
        await server.stop()
    assert "api_key_env" in str(raised.value)
    assert "sk-wrong" not in str(raised.value)


async def test_bad_request_is_recorded_not_retried() -> None:
    server = await serve([("status", 400)])
    client = client_for(server.base_url)
    try:
        completion = await client.generate(ask())
    finally:
        await client.aclose()
        await server.stop()
    assert completion.status == "error" and "rejected" in (completion.error or "")
    assert len(server.requests) == 1


async def test_constraints_go_out_as_json_schema_or_grammar() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2}}}

    def respond(body: dict[str, Any]) -> str:
        return "2" if "grammar" in body else default_content(body)

    server = await serve(responder=respond)
    json_client = client_for(server.base_url)
    grammar_client = client_for(server.base_url, constrained="grammar")
    try:
        structured = await json_client.generate(ask(constraint=JsonSchema.of(schema)))
        picked = await grammar_client.generate(ask("Pick", constraint=IntRange(1, 3)))
    finally:
        await json_client.aclose()
        await grammar_client.aclose()
        await server.stop()
    assert structured.status == "ok" and structured.value == {"n": 2}
    assert picked.status == "ok" and picked.value == 2
    first, second = server.requests
    assert first["response_format"]["json_schema"]["schema"] == schema
    assert first["seed"] == 1 and first["model"] == "fake-model"
    assert second["grammar"] == 'root ::= "1" | "2" | "3"'
    assert second["messages"][-1]["content"].endswith(
        "Reply with a single whole number from 1 to 3, and nothing else."
    )
