"""FakeOpenAIServer driven by the real `openai` client, so the wire format is what it expects."""

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import aiohttp
import openai
import pytest

from backchannel.testing import FakeOpenAIServer

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]


def client_for(server: FakeOpenAIServer, api_key: str = "sk-test") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key=api_key, max_retries=0)


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as running:
        yield running


async def test_normal_call_has_the_openai_shape_and_is_deterministic(
    server: FakeOpenAIServer,
) -> None:
    client = client_for(server)
    first = await client.chat.completions.create(model="m-1", messages=MESSAGES)
    second = await client.chat.completions.create(model="m-1", messages=MESSAGES)
    other = await client.chat.completions.create(
        model="m-1", messages=[{"role": "user", "content": "Something else"}]
    )
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    assert first.object == "chat.completion"
    assert first.model == "m-1"
    assert first.choices[0].finish_reason == "stop"
    content = first.choices[0].message.content
    assert content and content == second.choices[0].message.content
    assert content != other.choices[0].message.content
    # Token counts are whitespace words: 6 in the prompt, 2 in "Reply <hex>."
    assert first.usage is not None
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (6, 2)
    assert first.usage.total_tokens == 8
    assert server.requests_served == 3
    assert server.requests[0]["messages"] == MESSAGES
    assert server.requests[0]["model"] == "m-1"
    await client.close()


async def test_json_schema_response_is_valid_for_the_schema(server: FakeOpenAIServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "enum": ["yes", "no"]},
            "confidence": {"type": "integer", "minimum": 1, "maximum": 7},
            "ranking": {
                "type": "array",
                "items": {"type": "string", "enum": ["P1", "P2", "P3"]},
                "minItems": 3,
                "maxItems": 3,
            },
        },
        "required": ["answer", "confidence", "ranking"],
        "additionalProperties": False,
    }
    client = client_for(server)
    reply = await client.chat.completions.create(
        model="m",
        messages=MESSAGES,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        },
    )
    value = json.loads(reply.choices[0].message.content or "")
    assert value["answer"] == "yes"
    assert value["confidence"] == 1
    assert sorted(value["ranking"]) == ["P1", "P2", "P3"]
    await client.close()


async def test_unsatisfiable_schema_is_a_400() -> None:
    async with FakeOpenAIServer() as server:
        client = client_for(server)
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(
                model="m",
                messages=MESSAGES,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "bad", "schema": {"type": "widget"}},
                },
            )
        assert server.requests_served == 0
        await client.close()


async def test_responder_replaces_the_default_content() -> None:
    def shout(body: dict) -> str:
        return body["messages"][-1]["content"].upper()

    async with FakeOpenAIServer(responder=shout) as server:
        client = client_for(server)
        reply = await client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content == "WHAT IS THE CAPITAL OF FRANCE?"
        await client.close()


async def test_two_rate_limits_then_success() -> None:
    async with FakeOpenAIServer(faults=[("status", 429, 0), ("status", 429, 0)]) as server:
        client = client_for(server)
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as caught:
                await client.chat.completions.create(model="m", messages=MESSAGES)
            assert caught.value.status_code == 429
            assert caught.value.response.headers["Retry-After"] == "0"
        reply = await client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content
        assert len(server.requests) == 3
        assert server.requests_served == 1
        assert server.faults_remaining == 0
        await client.close()


async def test_sdk_retry_honours_the_script() -> None:
    # With SDK retries on, one 500 is absorbed: 2 requests reach the server, 1 is served.
    async with FakeOpenAIServer(faults=[("status", 500)]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=1)
        reply = await client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content
        assert (len(server.requests), server.requests_served) == (2, 1)
        await client.close()


async def test_disconnect_is_a_connection_error_and_delay_holds_the_slot() -> None:
    async with FakeOpenAIServer(faults=[("disconnect",), ("delay", 0.2)]) as server:
        client = client_for(server)
        with pytest.raises(openai.APIConnectionError):
            await client.chat.completions.create(model="m", messages=MESSAGES)
        started = time.perf_counter()
        await client.chat.completions.create(model="m", messages=MESSAGES)
        # The delay is a lower bound on the response time, so this cannot pass by luck.
        assert time.perf_counter() - started >= 0.2
        assert server.requests_served == 1
        await client.close()


async def test_slots_bound_concurrency_and_the_rest_queue() -> None:
    latency, slots, calls = 0.05, 4, 16
    async with FakeOpenAIServer(latency=latency, slots=slots) as server:
        client = client_for(server)
        started = time.perf_counter()
        await asyncio.gather(
            *(
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"q{i}"}]
                )
                for i in range(calls)
            )
        )
        elapsed = time.perf_counter() - started
        assert server.max_concurrency == slots
        assert server.requests_served == calls
        assert server.max_in_flight > slots  # some requests had to queue
        # 16 requests through 4 slots need at least 16 / 4 = 4 latencies of service time.
        assert elapsed >= (calls / slots) * latency
        await client.close()


async def test_wrong_api_key_gets_401_with_an_openai_error_body() -> None:
    async with FakeOpenAIServer(require_api_key="sk-right") as server:
        wrong = client_for(server, api_key="sk-wrong")
        with pytest.raises(openai.AuthenticationError) as caught:
            await wrong.chat.completions.create(model="m", messages=MESSAGES)
        assert caught.value.status_code == 401
        assert caught.value.code == "invalid_api_key"
        right = client_for(server, api_key="sk-right")
        reply = await right.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content
        assert server.requests_served == 1
        await wrong.close()
        await right.close()


async def test_models_endpoint_lists_the_models() -> None:
    async with FakeOpenAIServer(models=("alpha", "beta")) as server:
        client = client_for(server)
        page = await client.models.list()
        assert [model.id for model in page.data] == ["alpha", "beta"]
        await client.close()


def test_invalid_capacity_is_rejected() -> None:
    with pytest.raises(ValueError):
        FakeOpenAIServer(slots=0)
    with pytest.raises(ValueError):
        FakeOpenAIServer(latency=-0.1)


@pytest.mark.slow
async def test_subprocess_mode_prints_its_url_and_serves() -> None:
    command = [sys.executable, "-m", "backchannel.testing.fake_openai"]
    command += ["--port", "0", "--latency", "0.01", "--slots", "2"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        client = openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
        reply = await client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content
        await client.close()
        # Out of process the counters are read over HTTP.
        stats_url = url.removesuffix("/v1") + "/stats"
        async with aiohttp.ClientSession() as session, session.get(stats_url) as response:
            stats = await response.json()
        assert (stats["requests_received"], stats["requests_served"]) == (1, 1)
        assert stats["slots"] == 2
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
