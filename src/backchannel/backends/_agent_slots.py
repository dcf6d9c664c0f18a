"""One agent's calls to a llama.cpp server, one at a time and on its own slot, so each call
reuses the prompt its previous call left in the slot's cache.

An agent's prompts grow by appending (system, preamble, history, then the instruction), so its
next call shares everything but the instruction with its last one. Sent concurrently (a probe
after round r and the same agent's turn in round r + 1), both would evaluate that shared prefix;
one after the other, the second reuses it. Turns go before probes (critical first). The agent
is told apart by its conversation and its system message (its name and persona).

The wait for the agent's previous call happens before the endpoint's in-flight bound is taken,
so a waiting probe holds no slot. Slots: the agent's home slot when no call of this backend is
on it, else the least recently used free slot (which becomes its home); llama.cpp moves the
agent's cached prompt there from its RAM prompt cache. With every slot busy, no slot is named
and llama.cpp queues the call as usual.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator

from backchannel.backends._base import Backend
from backchannel.backends._limit import PriorityLimiter
from backchannel.backends._replicas import current_conversation
from backchannel.backends._types import RawCompletion, Request

AgentKey = tuple[str, str]
MAX_AGENTS = 4096
"""Agents remembered (least recently seen forgotten first): more than any run has in flight."""


def agent_key(request: Request) -> AgentKey | None:
    """(conversation, system message) of a call made inside a conversation, else None."""
    conversation = current_conversation()
    if conversation is None or request.messages[0].role != "system":
        return None
    return conversation, request.messages[0].content


class AgentSlots:
    """Per-agent turn-taking (`one_at_a_time`) and slot choice (`slot`) for one server."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a server has at least one slot")
        self._busy = [0] * slots
        self._last_used = list(range(slots))
        self._clock = slots
        self._homes: OrderedDict[AgentKey, int] = OrderedDict()
        self._locks: dict[AgentKey, tuple[PriorityLimiter, list[int]]] = {}

    @contextlib.asynccontextmanager
    async def one_at_a_time(self, key: AgentKey | None, critical: bool) -> AsyncIterator[None]:
        """Wait until the agent has no other call in flight (turns before probes)."""
        if key is None:
            yield
            return
        lock, users = self._locks.setdefault(key, (PriorityLimiter(1), [0]))
        users[0] += 1
        try:
            await lock.acquire(critical)
            try:
                yield
            finally:
                lock.release()
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

    @contextlib.contextmanager
    def slot(self, key: AgentKey | None) -> Iterator[int | None]:
        """The slot to name for this call (None: let the server choose), held while inside."""
        chosen = self._choose(key)
        if chosen is None:
            yield None
            return
        self._busy[chosen] += 1
        self._clock += 1
        self._last_used[chosen] = self._clock
        try:
            yield chosen
        finally:
            self._busy[chosen] -= 1

    def home(self, key: AgentKey) -> int | None:
        return self._homes.get(key)

    def _choose(self, key: AgentKey | None) -> int | None:
        if key is None:
            return None
        home = self._homes.get(key)
        if home is not None and not self._busy[home]:
            self._homes.move_to_end(key)
            return home
        free = [slot for slot, busy in enumerate(self._busy) if not busy]
        if not free:
            return None
        chosen = min(free, key=lambda slot: self._last_used[slot])
        self._homes[key] = chosen
        self._homes.move_to_end(key)
        while len(self._homes) > MAX_AGENTS:
            self._homes.popitem(last=False)
        return chosen


class AgentOrderBackend:
    """Outside the in-flight bound: holds each agent's call until its previous one is done."""

    def __init__(self, inner: Backend, slots: AgentSlots) -> None:
        self._inner = inner
        self._slots = slots

    @property
    def endpoint(self) -> str:
        return self._inner.endpoint

    async def generate(self, request: Request) -> RawCompletion:
        async with self._slots.one_at_a_time(agent_key(request), request.critical):
            return await self._inner.generate(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
