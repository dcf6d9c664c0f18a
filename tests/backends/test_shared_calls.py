"""Single flight and shared calls in the response cache: two conversations asking the same call
make it once, and the answer knows which conversation's call made it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backchannel.backends import (
    GenerationSettings,
    Message,
    RawCompletion,
    Request,
    ResponseCache,
    count_shared_calls,
)
from backchannel.backends._cache import CachedBackend
from backchannel.backends._replicas import conversation_affinity

REQUEST = Request(
    model="openai/m",
    messages=(Message("user", "where is the ball?"),),
    settings=GenerationSettings(temperature=0.0, max_tokens=8),
    seed=3,
)


class Slow:
    """A backend that answers after a gate opens, counting its calls; it can fail once."""

    endpoint = "slow"

    def __init__(self, fail_first: bool = False) -> None:
        self.calls = 0
        self.gate = asyncio.Event()
        self.fail_first = fail_first

    async def generate(self, request: Request) -> RawCompletion:
        self.calls += 1
        await self.gate.wait()
        if self.fail_first and self.calls == 1:
            raise RuntimeError("the server went away")
        return RawCompletion(f"answer {self.calls}", 4, 2)

    async def aclose(self) -> None:
        return None


async def ask(backend: CachedBackend, conversation: str) -> tuple[RawCompletion, int]:
    with conversation_affinity(conversation), count_shared_calls() as shared:
        answer = await backend.generate(REQUEST)
    return answer, shared.count


async def test_two_conversations_asking_at_once_make_the_call_once(tmp_path: Path) -> None:
    inner = Slow()
    backend = CachedBackend(inner, ResponseCache(tmp_path / "cache.sqlite"))
    first = asyncio.create_task(ask(backend, "C0/story/0"))
    second = asyncio.create_task(ask(backend, "C1/story/0"))
    await asyncio.sleep(0.01)
    assert inner.calls == 1  # the second waits for the first's answer
    inner.gate.set()
    (a, shared_a), (b, shared_b) = await asyncio.gather(first, second)
    assert inner.calls == 1
    assert a.text == b.text == "answer 1"
    assert (a.cached, shared_a) == (False, 0)
    assert (b.cached, b.origin, shared_b) == (True, "C0/story/0", 1)


async def test_a_later_hit_is_shared_only_across_conversations(tmp_path: Path) -> None:
    inner = Slow()
    inner.gate.set()
    backend = CachedBackend(inner, ResponseCache(tmp_path / "cache.sqlite"))
    made, _ = await ask(backend, "C0/story/0")
    again, shared_again = await ask(backend, "C0/story/0")  # a resumed conversation replays
    other, shared_other = await ask(backend, "C1/story/0")  # another arm shares the call
    assert inner.calls == 1
    assert (again.cached, again.origin, shared_again) == (True, "C0/story/0", 0)
    assert (other.cached, other.origin, shared_other) == (True, "C0/story/0", 1)
    assert made.text == again.text == other.text


async def test_when_the_first_call_fails_the_waiting_one_asks_itself(tmp_path: Path) -> None:
    inner = Slow(fail_first=True)
    backend = CachedBackend(inner, ResponseCache(tmp_path / "cache.sqlite"))
    first = asyncio.create_task(ask(backend, "C0/story/0"))
    second = asyncio.create_task(ask(backend, "C1/story/0"))
    await asyncio.sleep(0.01)
    inner.gate.set()
    with pytest.raises(RuntimeError, match="went away"):
        await first
    answer, shared = await second
    assert inner.calls == 2 and answer.text == "answer 2" and shared == 0
    assert not backend._flights  # nothing left in flight
