"""Every unusable 200 body is a transient fault of the transport: retried like a 500, its message
naming the endpoint, counted as a failed call when the retries run out. And a call is bounded
as a whole: `timeout_s` from connect to the body's last byte, `retry.max_wait_s` over the
retries still running."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from backchannel.backends import (
    EndpointSettings,
    Message,
    RawCompletion,
    Request,
    RetryPolicy,
    TransientBackendError,
    build_client,
)
from backchannel.backends._openai import OpenAIBackend
from backchannel.backends._retry import RetryingBackend
from backchannel.testing import FakeOpenAIServer
from backchannel.testing._faults import NOT_UTF8

MODEL = "openai/fake-model"
REQUEST = Request(MODEL, (Message("user", "Hello?"),), seed=1)


def completion_json(content: str = '"x"', usage: str = "{}", extra: str = "") -> str:
    return f'{{"choices": [{{"message": {{"content": {content}{extra}}}}}], "usage": {usage}}}'


# (body, what the message says is wrong): bodies that cannot be decoded, cannot be parsed, or
# parse into something other than a chat completion.
UNUSABLE: list[tuple[str | bytes, str]] = [
    (NOT_UTF8, "UnicodeDecodeError"),
    (b'\xff\xfe{\x00"\x00}\x00', "not valid JSON"),  # UTF-16 with its byte-order mark
    (b"\x1f\x8b\x08\x00 gzip bytes sent as plain JSON", "UnicodeDecodeError"),
    ('{"id": "chatcmpl-cut", "choices": [{"mes', "JSONDecodeError"),
    ("", "JSONDecodeError"),
    ("[" * 100_000, "RecursionError"),
    ("null", "the body is JSON null"),
    ("[]", "the body is a list"),
    ('"a string"', "the body is text starting 'a string'"),
    ('{"choices": "none"}', "no choices"),
    ('{"choices": [[]]}', "choices[0] is a list"),
    ('{"choices": [{"message": "hi"}]}', "choices[0].message is text"),
    (completion_json("5"), "message.content is int"),
    (completion_json('["a"]'), "message.content is list"),
    (completion_json('"x"', extra=', "refusal": 1'), "message.refusal is int"),
    (completion_json(usage="[]"), "usage is a list"),
    (completion_json(usage='{"prompt_tokens": "7"}'), "usage.prompt_tokens is '7'"),
    (completion_json(usage='{"completion_tokens": -1}'), "usage.completion_tokens is -1"),
    (completion_json(usage='{"prompt_tokens": true}'), "usage.prompt_tokens is True"),
    (completion_json(usage='{"prompt_tokens": NaN}'), "usage.prompt_tokens is nan"),
    (completion_json(usage='{"prompt_tokens": 1.5}'), "usage.prompt_tokens is 1.5"),
    (
        completion_json(usage='{"completion_tokens_details": {"reasoning_tokens": "many"}}'),
        "usage.reasoning_tokens is 'many'",
    ),
    ('{"choices": [{"message": {"content": "x"}, "finish_reason": 3}]}', "finish_reason is"),
]


@pytest.mark.parametrize(("body", "problem"), UNUSABLE)
async def test_an_unusable_body_is_a_transient_fault_naming_the_endpoint(
    body: str | bytes, problem: str
) -> None:
    async with FakeOpenAIServer(faults=[("body", body)]) as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key="k")
        try:
            with pytest.raises(TransientBackendError) as raised:
                await backend.generate(REQUEST)
            message = str(raised.value)
            assert message.startswith(f"{server.base_url}/ answered 200 with a body that ")
            assert problem in message
            assert not raised.value.connection  # the server is there: not "unreachable"
            assert "\n" not in message and len(message) < 300
            assert (await backend.generate(REQUEST)).text  # the next request is served
        finally:
            await backend.aclose()


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """A server whose chat-completions handler the test gives; yields a starter of base URLs."""
    runners: list[web.AppRunner] = []

    async def start(handler: Any) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()


async def broken_gzip(request: web.Request) -> web.Response:
    return web.Response(
        body=b"not compressed at all",
        headers={"Content-Encoding": "gzip", "Content-Type": "application/json"},
    )


async def cut_off(request: web.Request) -> web.StreamResponse:
    """Announce 500 bytes, send 13, hang up."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.content_length = 500
    await response.prepare(request)
    await response.write(b'{"choices": [')
    assert request.transport is not None
    request.transport.close()
    return response


async def latin1(request: web.Request) -> web.Response:
    body = '{"choices": [{"message": {"content": "café"}}]}'.encode("latin-1")
    return web.Response(body=body, headers={"Content-Type": "application/json; charset=latin-1"})


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (broken_gzip, "whose body could not be read (Error -3 while decompressing"),
        (cut_off, "whose body could not be read (Response payload is not completed"),
        (latin1, "not valid JSON (UnicodeDecodeError"),
    ],
)
async def test_bodies_broken_on_the_wire_are_faults_of_a_server_that_is_there(
    raw_server: Callable[[Any], Awaitable[str]], handler: Any, problem: str
) -> None:
    base_url = await raw_server(handler)
    backend = OpenAIBackend(base_url=base_url, api_key="k")
    try:
        with pytest.raises(TransientBackendError) as raised:
            await backend.generate(REQUEST)
    finally:
        await backend.aclose()
    assert str(raised.value).startswith(f"{base_url}/ ")
    assert problem in str(raised.value)
    assert not raised.value.connection


def client_for(base_url: str, retry: RetryPolicy, timeout_s: float = 5.0) -> Any:
    endpoint = EndpointSettings(base_url=base_url, api_key="k", timeout_s=timeout_s)
    return build_client([MODEL], endpoints=[endpoint], retry=retry)


async def test_every_unusable_body_in_turn_is_retried_to_the_real_answer() -> None:
    faults = [("body", body) for body, _ in UNUSABLE]
    async with FakeOpenAIServer(faults=faults) as server:
        client = client_for(server.base_url, RetryPolicy(base_delay_s=0.0, max_delay_s=0.0))
        try:
            completion = await client.generate(REQUEST)
        finally:
            await client.aclose()
    assert completion.status == "ok" and completion.text.startswith("Reply ")
    assert completion.retries == len(UNUSABLE)
    usage = client.usage.model(MODEL)
    assert (usage.retries, usage.failures) == (len(UNUSABLE), 0)


async def test_unusable_bodies_past_the_retries_are_a_failed_call_counted_as_one() -> None:
    async with FakeOpenAIServer(faults=[("not_utf8",), ("not_utf8",)]) as server:
        client = client_for(server.base_url, RetryPolicy(max_retries=1, base_delay_s=0.0))
        try:
            completion = await client.generate(REQUEST)
            after = await client.generate(REQUEST)
        finally:
            await client.aclose()
    assert completion.status == "error"
    assert completion.error is not None
    assert completion.error.startswith(f"{server.base_url}/ answered 200 with a body that is not")
    assert "UnicodeDecodeError" in completion.error and "after 1 retries" in completion.error
    assert "Traceback" not in completion.error
    assert after.status == "ok"
    usage = client.usage.model(MODEL)
    assert (usage.calls, usage.failures, usage.retries) == (2, 1, 1)


async def test_timeout_s_bounds_a_body_that_trickles_in() -> None:
    # Each piece arrives well within the timeout; the whole body would take 6 s.
    async with FakeOpenAIServer(faults=[("trickle", 6.0)]) as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key="k", timeout_s=0.5)
        try:
            started = time.perf_counter()
            with pytest.raises(TransientBackendError, match="within the endpoint's timeout_s"):
                await backend.generate(REQUEST)
            elapsed = time.perf_counter() - started
            assert (await backend.generate(REQUEST)).text
        finally:
            await backend.aclose()
    assert elapsed < 3.0


async def test_a_trickle_within_timeout_s_is_an_ordinary_answer() -> None:
    async with FakeOpenAIServer(faults=[("trickle", 0.3)]) as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key="k", timeout_s=5.0)
        try:
            completion = await backend.generate(REQUEST)
        finally:
            await backend.aclose()
    assert completion.text.startswith("Reply ") and completion.latency_s >= 0.3


async def test_max_wait_s_cuts_off_a_retry_still_running() -> None:
    # The first answer is a 500; the retry trickles for 6 s inside a 10 s timeout, but the
    # call's retry.max_wait_s of 0.6 s is up long before.
    async with FakeOpenAIServer(faults=[("status", 500), ("trickle", 6.0)]) as server:
        client = client_for(
            server.base_url, RetryPolicy(base_delay_s=0.0, max_wait_s=0.6), timeout_s=10.0
        )
        try:
            started = time.perf_counter()
            completion = await client.generate(REQUEST)
            elapsed = time.perf_counter() - started
        finally:
            await client.aclose()
    assert completion.status == "error" and completion.error is not None
    assert "was still answering retry 1 when the call's retry.max_wait_s (0.6 s) was up" in (
        completion.error
    )
    assert "last error: server error 500" in completion.error
    assert elapsed < 3.0
    assert client.usage.model(MODEL).failures == 1


class _Scripted:
    """A raw backend that fails once, then hangs (or answers) as told."""

    endpoint = "http://scripted/v1"

    def __init__(self, *, connection: bool, hang: bool) -> None:
        self.calls = 0
        self._connection = connection
        self._hang = hang

    async def generate(self, request: Request) -> RawCompletion:
        self.calls += 1
        if self.calls == 1:
            raise TransientBackendError("first failure", connection=self._connection)
        if self._hang:
            await asyncio.sleep(3600)
        return RawCompletion("fine", 1, 1, 0.0)

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("connection", [True, False])
async def test_a_cut_off_retry_keeps_what_the_last_failure_said(connection: bool) -> None:
    inner = _Scripted(connection=connection, hang=True)
    backend = RetryingBackend(inner, RetryPolicy(base_delay_s=0.0, max_wait_s=0.2))
    with pytest.raises(TransientBackendError) as raised:
        await backend.generate(REQUEST)
    assert raised.value.connection is connection
    assert getattr(raised.value, "retries", None) == 1
    assert "last error: first failure" in str(raised.value)


async def test_the_first_attempt_is_not_cut_by_max_wait_s() -> None:
    # max_wait_s 0: no retries, but the one attempt runs to its end.
    class Slow(_Scripted):
        async def generate(self, request: Request) -> RawCompletion:
            await asyncio.sleep(0.2)
            return RawCompletion("slow but fine", 1, 1, 0.2)

    backend = RetryingBackend(Slow(connection=False, hang=False), RetryPolicy(max_wait_s=0.0))
    assert (await backend.generate(REQUEST)).text == "slow but fine"


async def test_a_retry_that_answers_in_time_is_kept() -> None:
    inner = _Scripted(connection=False, hang=False)
    backend = RetryingBackend(inner, RetryPolicy(base_delay_s=0.0, max_wait_s=5.0))
    completion = await backend.generate(REQUEST)
    assert (completion.text, completion.retries, inner.calls) == ("fine", 1, 2)


@pytest.mark.parametrize("body", [NOT_UTF8, b"<html>\xff</html>", b"[" * 100_000, b'{"cut'])
async def test_an_unusable_models_body_still_means_the_server_is_there(body: bytes) -> None:
    # The check before a run and the health probe of a drained replica both read GET /models:
    # a body they cannot decode still comes from a running server.
    async def models(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    backend = OpenAIBackend(base_url=f"http://127.0.0.1:{runner.addresses[0][1]}/v1", api_key="k")
    try:
        await backend.check_reachable()
        await backend.probe()
    finally:
        await backend.aclose()
        await runner.cleanup()
