"""A bound on in-flight requests per endpoint that serves the critical path first.

When the bound is reached, a waiting turn of a conversation (critical) is admitted before waiting
probes and judge calls (off the critical path), so side work fills idle slots without delaying
the chain of dependent turns.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from backchannel.backends._base import Backend
from backchannel.backends._types import RawCompletion, Request


class PriorityLimiter:
    """A semaphore whose waiters are woken by priority, then in arrival order."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the in-flight limit must be at least 1")
        self.limit = limit
        self._in_use = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @property
    def in_use(self) -> int:
        return self._in_use

    @property
    def waiting(self) -> int:
        return sum(1 for _, _, future in self._waiters if not future.done())

    def resize(self, limit: int) -> None:
        """Change the bound: a larger one admits waiters at once; a smaller one takes effect as
        calls in flight finish (none is interrupted)."""
        if limit < 1:
            raise ValueError("the in-flight limit must be at least 1")
        self.limit = limit
        while self._in_use < self.limit and self._wake_one():
            self._in_use += 1

    async def acquire(self, critical: bool) -> None:
        if self._in_use < self.limit and not self._waiters:
            self._in_use += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (0 if critical else 1, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()
            raise

    def release(self) -> None:
        # The slot passes to the next waiter unless the bound was lowered below the calls in use.
        if self._in_use > self.limit or not self._wake_one():
            self._in_use -= 1

    def _wake_one(self) -> bool:
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
                return True
        return False


class LimitedBackend:
    """Holds a limiter slot for the duration of each inner call."""

    def __init__(self, inner: Backend, limiter: PriorityLimiter) -> None:
        self._inner = inner
        self._limiter = limiter

    @property
    def endpoint(self) -> str:
        return self._inner.endpoint

    async def generate(self, request: Request) -> RawCompletion:
        await self._limiter.acquire(request.critical)
        try:
            return await self._inner.generate(request)
        finally:
            self._limiter.release()

    async def aclose(self) -> None:
        await self._inner.aclose()
