"""Several servers of one model behind one backend: each conversation keeps to one replica (so
the server's prefix cache pays off), chosen when it first calls as the least loaded; every
replica has its own in-flight bound; a failing replica is drained and re-probed with backoff.

Health: a refused or dropped connection drains a replica at once; so do `drain_after`
server errors (5xx, unreadable answers) in a row. Rate limits and timeouts are load, not
failure: they lower an adaptive bound and are retried on the same replica. A call whose replica
is drained is sent at once to another one; the conversation moves with it. While every replica
is drained, calls still go to one of them (each call is then a probe), and the retry wrapper's
backoff bounds how long a run waits before it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from backchannel.backends._adaptive import AdaptiveLimiter
from backchannel.backends._base import Backend
from backchannel.backends._errors import TransientBackendError
from backchannel.backends._limit import PriorityLimiter
from backchannel.backends._types import RawCompletion, Request

DRAIN_AFTER = 3
"""Server errors in a row that drain a replica."""
PROBE_BASE_S = 0.5
PROBE_MAX_S = 30.0

Probe = Callable[[], Awaitable[None]]
"""Raises TransientBackendError unless the server answers (e.g. `GET /v1/models`)."""


@dataclass
class ReplicaStats:
    """What `status` and the progress display show of one replica."""

    url: str
    calls: int
    failures: int
    in_flight: int
    limit: int
    healthy: bool
    drains: int


class Replica:
    """One server: its raw backend, its in-flight bound and its health."""

    def __init__(
        self, url: str, backend: Backend, limiter: PriorityLimiter, probe: Probe | None
    ) -> None:
        self.url = url
        self.backend = backend
        self.limiter = limiter
        self.probe = probe
        self.calls = 0
        self.failures = 0
        self.active = 0
        """Conversations currently pinned here."""
        self.healthy = True
        self.drains = 0
        self._errors_in_a_row = 0
        self._probing: asyncio.Task[None] | None = None

    def load(self) -> tuple[float, float]:
        return (self.active / self.limiter.limit, self.limiter.in_use / self.limiter.limit)

    def stats(self) -> ReplicaStats:
        return ReplicaStats(
            self.url,
            self.calls,
            self.failures,
            self.limiter.in_use,
            self.limiter.limit,
            self.healthy,
            self.drains,
        )

    async def generate(self, request: Request) -> RawCompletion:
        await self.limiter.acquire(request.critical)
        try:
            raw = await self.backend.generate(request)
        except TransientBackendError as error:
            self._failed(error)
            raise
        finally:
            self.limiter.release()
        self.calls += 1
        self._errors_in_a_row = 0
        if isinstance(self.limiter, AdaptiveLimiter):
            self.limiter.record_success(raw.latency_s)
        return raw

    def _failed(self, error: TransientBackendError) -> None:
        self.failures += 1
        adaptive = self.limiter if isinstance(self.limiter, AdaptiveLimiter) else None
        if _is_overload(error):
            if adaptive is not None:
                adaptive.record_overload()
            return
        if adaptive is not None:
            adaptive.record_other()
        self._errors_in_a_row += 1
        if error.connection or self._errors_in_a_row >= DRAIN_AFTER:
            self.drain()

    def drain(self) -> None:
        """Take the replica out of rotation and re-probe it with backoff."""
        if not self.healthy:
            return
        self.healthy = False
        self.drains += 1
        if self.probe is not None and (self._probing is None or self._probing.done()):
            self._probing = asyncio.get_running_loop().create_task(self._reprobe())

    def restore(self) -> None:
        self.healthy = True
        self._errors_in_a_row = 0

    async def _reprobe(self) -> None:
        assert self.probe is not None
        rng = random.Random(self.url)
        attempt = 0
        while not self.healthy:
            cap = min(PROBE_MAX_S, PROBE_BASE_S * (2**attempt))
            await asyncio.sleep(rng.uniform(cap / 2, cap))
            try:
                await self.probe()
            except TransientBackendError:
                attempt += 1
                continue
            self.restore()

    async def aclose(self) -> None:
        if self._probing is not None:
            self._probing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probing
        await self.backend.aclose()


def _is_overload(error: TransientBackendError) -> bool:
    """A rate limit (429) or a timeout: the server is busy, not broken."""
    import openai

    cause = error.__cause__
    if isinstance(cause, openai.RateLimitError):
        return True
    return isinstance(cause, openai.APITimeoutError) and not error.connection


@dataclass
class Affinity:
    """The replica one conversation is pinned to in each replica set, and its calls on each."""

    key: str
    pins: dict[int, Replica] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    moves: int = 0
    """Times a call of this conversation went to a replica other than its pinned one."""

    def release(self) -> None:
        for replica in self.pins.values():
            replica.active -= 1
        self.pins.clear()


_current: ContextVar[Affinity | None] = ContextVar("backchannel_replica_affinity", default=None)


def current_conversation() -> str | None:
    """The key of the conversation whose call is running here, if any."""
    affinity = _current.get()
    return affinity.key if affinity is not None else None


@contextlib.contextmanager
def conversation_affinity(key: str) -> Iterator[Affinity]:
    """Pin the calls made inside (and in tasks started inside) to one replica per model."""
    affinity = Affinity(key)
    token = _current.set(affinity)
    try:
        yield affinity
    finally:
        _current.reset(token)
        affinity.release()


class ReplicatedBackend:
    """Routes each call to its conversation's replica; re-routes calls of a drained one."""

    def __init__(self, replicas: Sequence[Replica], endpoint: str) -> None:
        if not replicas:
            raise ValueError("a replica set needs at least one replica")
        self.replicas = list(replicas)
        self._endpoint = endpoint

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def stats(self) -> list[ReplicaStats]:
        return [replica.stats() for replica in self.replicas]

    def _choose(self, affinity: Affinity | None, tried: set[int]) -> Replica:
        pinned = affinity.pins.get(id(self)) if affinity is not None else None
        if pinned is not None and pinned.healthy and id(pinned) not in tried:
            return pinned
        candidates = [r for r in self.replicas if r.healthy and id(r) not in tried]
        if not candidates:
            # Nothing healthy: stay where the conversation was (the call probes it).
            if pinned is not None:
                return pinned
            candidates = [r for r in self.replicas if id(r) not in tried] or self.replicas
        chosen = min(enumerate(candidates), key=lambda pair: (*pair[1].load(), pair[0]))[1]
        if affinity is not None:
            if pinned is not None:
                pinned.active -= 1
                affinity.moves += 1
            chosen.active += 1
            affinity.pins[id(self)] = chosen
        return chosen

    async def generate(self, request: Request) -> RawCompletion:
        affinity = _current.get()
        tried: set[int] = set()
        rerouted = 0
        while True:
            replica = self._choose(affinity, tried)
            try:
                raw = await replica.generate(request)
            except TransientBackendError:
                tried.add(id(replica))
                if not replica.healthy and any(
                    r.healthy and id(r) not in tried for r in self.replicas
                ):
                    rerouted += 1
                    continue
                raise
            if affinity is not None:
                affinity.calls[replica.url] = affinity.calls.get(replica.url, 0) + 1
            return replace(raw, retries=raw.retries + rerouted) if rerouted else raw

    async def aclose(self) -> None:
        await asyncio.gather(*(replica.aclose() for replica in self.replicas))
