"""Each agent's calls to the embedded server: one at a time (turns before probes), outside the
in-flight bound, and on one slot (`id_slot`) while that slot is free."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web

from backchannel.backends import GenerationSettings, Message, RawCompletion, Request
from backchannel.backends._agent_slots import AgentOrderBackend, AgentSlots, agent_key
from backchannel.backends._local import LocalBackend
from backchannel.backends._openai import OpenAIBackend
from backchannel.backends._replicas import conversation_affinity

MODEL = "local/tiny.gguf"


def _request(agent: str, text: str = "Speak.", critical: bool = True) -> Request:
    messages = (Message("system", f"You are {agent}."), Message("user", text))
    return Request(MODEL, messages, GenerationSettings(max_tokens=4), critical=critical)


def test_the_agent_is_its_conversation_and_system_message() -> None:
    assert agent_key(_request("Ann")) is None  # outside a conversation
    with conversation_affinity("c1"):
        assert agent_key(_request("Ann")) == ("c1", "You are Ann.")
        bare = Request(MODEL, (Message("user", "Hi"),))
        assert agent_key(bare) is None  # no system message: nothing tells agents apart


def test_home_slot_while_free_else_the_least_recently_used_free_one() -> None:
    slots = AgentSlots(3)
    ann, bob, cy = ("c", "Ann"), ("c", "Bob"), ("c", "Cy")
    with slots.slot(ann) as first:
        assert first == 0
        with slots.slot(bob) as second:
            assert second == 1
    with slots.slot(ann) as again:
        assert again == 0  # its home, free again
        with slots.slot(ann) as moved:
            assert moved == 2  # home busy: the free slot used longest ago
            with slots.slot(cy) as busy_home, slots.slot(bob) as none_free:
                assert busy_home == 1  # slot 1 was used before slot 0
                assert none_free is None  # every slot busy: the server chooses
    assert slots.home(ann) == 2 and slots.home(cy) == 1
    with slots.slot(None) as unknown:
        assert unknown is None


class _Inner:
    """Records when each call starts and ends; each takes `delay` seconds."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.log: list[tuple[str, str]] = []

    @property
    def endpoint(self) -> str:
        return "inner"

    async def generate(self, request: Request) -> RawCompletion:
        label = request.messages[1].content
        self.log.append(("start", label))
        await asyncio.sleep(self.delay)
        self.log.append(("end", label))
        return RawCompletion(label)

    async def aclose(self) -> None:
        return None


async def test_an_agents_calls_run_one_at_a_time_turns_first_others_alongside() -> None:
    inner = _Inner()
    backend = AgentOrderBackend(inner, AgentSlots(4))
    with conversation_affinity("c1"):
        first = asyncio.create_task(backend.generate(_request("Ann", "ann-turn-1")))
        await asyncio.sleep(0.01)
        probe = asyncio.create_task(backend.generate(_request("Ann", "ann-probe", False)))
        await asyncio.sleep(0.01)
        turn = asyncio.create_task(backend.generate(_request("Ann", "ann-turn-2")))
        other = asyncio.create_task(backend.generate(_request("Bob", "bob-probe", False)))
        await asyncio.gather(first, probe, turn, other)
    ann = [entry for entry in inner.log if entry[1].startswith("ann")]
    assert ann == [
        ("start", "ann-turn-1"),
        ("end", "ann-turn-1"),
        ("start", "ann-turn-2"),
        ("end", "ann-turn-2"),
        ("start", "ann-probe"),
        ("end", "ann-probe"),
    ]
    # Bob's call did not wait for Ann's.
    assert inner.log.index(("start", "bob-probe")) < inner.log.index(("end", "ann-turn-1"))


async def test_calls_outside_a_conversation_are_not_held() -> None:
    inner = _Inner()
    backend = AgentOrderBackend(inner, AgentSlots(1))
    await asyncio.gather(
        backend.generate(_request("Ann", "one")), backend.generate(_request("Ann", "two"))
    )
    assert [kind for kind, _ in inner.log] == ["start", "start", "end", "end"]


class _SlotServer:
    """A llama.cpp-like server on 127.0.0.1 that records each request's `id_slot`."""

    def __init__(self) -> None:
        self.slots: list[tuple[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> _SlotServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.slots.append((body["messages"][0]["content"], body.get("id_slot")))
        message = {"role": "assistant", "content": "ok"}
        return web.json_response({"choices": [{"index": 0, "message": message}]})


async def test_an_agents_successive_requests_carry_the_same_id_slot(tmp_path: Path) -> None:
    async with _SlotServer() as server:
        local = LocalBackend(tmp_path / "tiny.gguf", parallel=2)
        # The embedded server's client, pointed at the recording server instead of llama.cpp.
        local._client = OpenAIBackend(base_url=server.base_url, api_key=None)
        try:
            with conversation_affinity("c1"):
                for _ in range(3):
                    for agent in ("Ann", "Bob", "Cy"):
                        await local.generate(_request(agent))
            plain = LocalBackend(tmp_path / "tiny.gguf", parallel=2, slot_affinity=False)
            plain._client = local._client
            with conversation_affinity("c1"):
                await plain.generate(_request("Ann"))
        finally:
            await local.aclose()
    by_agent: dict[str, set[Any]] = {}
    for system, slot in server.slots[:-1]:
        by_agent.setdefault(system, set()).add(slot)
    # One at a time, each agent keeps its home slot; Cy took the slot used longest ago (Ann's).
    assert by_agent == {"You are Ann.": {0}, "You are Bob.": {1}, "You are Cy.": {0}}
    assert server.slots[-1] == ("You are Ann.", None)  # without affinity the server chooses
