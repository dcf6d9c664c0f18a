"""A llama.cpp server's own per-call `timings` are read from its answer, summed over re-asks and
stored with the event (`meta["timings"]`), so a run knows prompt tokens evaluated vs sent."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from backchannel.backends import Completion, LabelSet, LLMClient, Message, Request, Route
from backchannel.backends._openai import OpenAIBackend, _completion
from backchannel.engine import Event

MODEL = "openai/tiny"
TIMINGS = {
    "cache_n": 30,
    "prompt_n": 12,
    "prompt_ms": 80.5,
    "prompt_per_token_ms": 6.7,
    "prompt_per_second": 149.1,
    "predicted_n": 4,
    "predicted_ms": 25.25,
    "predicted_per_token_ms": 6.3,
    "predicted_per_second": 158.4,
}
KEPT = {
    "prompt_n": 12.0,
    "cache_n": 30.0,
    "predicted_n": 4.0,
    "prompt_ms": 80.5,
    "predicted_ms": 25.25,
}


def _data(content: str, timings: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 42, "completion_tokens": 4},
    }
    if timings is not None:
        data["timings"] = timings
    return data


def test_the_five_timings_are_kept_and_the_rates_dropped() -> None:
    raw = _completion(_data("A", TIMINGS), "http://e/v1", 0.1)
    assert raw.timings == KEPT
    assert raw.prompt_tokens == KEPT["prompt_n"] + KEPT["cache_n"]


@pytest.mark.parametrize(
    "timings",
    [None, "fast", {"prompt_n": 3}, {**TIMINGS, "cache_n": None}, {**TIMINGS, "prompt_n": True}],
)
def test_missing_or_incomplete_timings_read_as_none(timings: Any) -> None:
    assert _completion(_data("A", timings), "http://e/v1", 0.1).timings is None


class _LlamaLikeServer:
    """Answers chat completions the way a llama.cpp server does, `timings` included; the first
    `unreadable` answers are not in the label set, so the client re-asks."""

    def __init__(self, unreadable: int) -> None:
        self.unreadable = unreadable
        self.bodies: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> _LlamaLikeServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        content = "maybe" if len(self.bodies) <= self.unreadable else "yes"
        return web.json_response(_data(content, TIMINGS))


async def test_timings_are_summed_over_reasks_and_stored_with_the_event() -> None:
    async with _LlamaLikeServer(unreadable=1) as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key=None, constrained="none")
        client = LLMClient({MODEL: Route(backend)})
        try:
            request = Request(
                MODEL, (Message("user", "Yes or no?"),), constraint=LabelSet(("yes", "no"))
            )
            completion = await client.generate(request)
        finally:
            await client.aclose()
    assert len(server.bodies) == 2
    assert completion.status == "ok" and completion.attempts == 2
    assert completion.timings == {key: 2 * value for key, value in KEPT.items()}
    event = Event(1, "probe", "answer", 1, None, "Ann", "honest", "private").fill(completion)
    assert event.meta["timings"] == completion.timings


def test_a_call_without_timings_stores_no_timings_key() -> None:
    completion = Completion("yes", "yes", "ok", MODEL, prompt_tokens=42, completion_tokens=4)
    event = Event(1, "probe", "answer", 1, None, "Ann", "honest", "private").fill(completion)
    assert "timings" not in event.meta
    assert event.prompt_tokens == 42
