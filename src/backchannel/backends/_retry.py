"""Retries of transient failures, bounded by a total wait per call, with exponential backoff and
full jitter; honours Retry-After.

A count alone is no bound at a high fault rate (at 47 % failures, 7 attempts still lose one call
in 200), so the bound is the time a call may spend retrying: `max_wait_s`, several minutes by
default. It bounds the attempts in progress too: a retry still running when the call's
`max_wait_s` is up is cut off there, so a call ends by then (or when its first attempt ends, if
that is later: the first attempt is bounded by the endpoint's own `timeout_s`). `max_retries` is
an optional extra cap.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Annotated

from pydantic import ConfigDict, Field

from backchannel.backends._base import Backend
from backchannel.backends._errors import TransientBackendError
from backchannel.backends._types import RawCompletion, Request


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long and how patiently to retry a transient failure (rate limits, server errors,
    timeouts, dropped connections, unreadable bodies); the experiment file's `retry:` section."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    max_retries: Annotated[
        int | None,
        Field(ge=0, description="Optional cap on retries per call (null: only max_wait_s bounds)."),
    ] = None
    base_delay_s: Annotated[
        float, Field(ge=0, description="First backoff cap; it doubles with every retry.")
    ] = 0.5
    max_delay_s: Annotated[float, Field(ge=0, description="Largest backoff cap.")] = 30.0
    max_retry_after_s: Annotated[
        float, Field(ge=0, description="Longest server-requested wait (Retry-After) honoured.")
    ] = 300.0
    max_wait_s: Annotated[
        float,
        Field(
            ge=0,
            description="Longest time one call spends from its first request to the end of its "
            "last retry; a retry still running then is cut off.",
        ),
    ] = 300.0

    def __post_init__(self) -> None:
        values = (self.base_delay_s, self.max_delay_s, self.max_retry_after_s, self.max_wait_s)
        if min(values) < 0 or (self.max_retries is not None and self.max_retries < 0):
            raise ValueError("retry settings must not be negative")

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter within the exponential cap, but never sooner than the server asked, up to
        `max_retry_after_s` (a Retry-After of an hour must not stall a run for an hour)."""
        cap = min(self.max_delay_s, self.base_delay_s * (2 ** min(retry, 60)))
        jittered = rng.uniform(0, cap)
        if retry_after is not None:
            return max(min(retry_after, self.max_retry_after_s), jittered)
        return jittered


def _spent(error: TransientBackendError, retries: int, waited_s: float) -> TransientBackendError:
    """`error` with the retries made and the time spent attached (the client reports both)."""
    error.retries = retries  # type: ignore[attr-defined]
    error.waited_s = waited_s  # type: ignore[attr-defined]
    return error


class RetryingBackend:
    """Retries transient errors while the call's total wait allows; the last error propagates
    with the retry count and the time spent attached, and says so in its message."""

    def __init__(
        self,
        inner: Backend,
        policy: RetryPolicy,
        seed: int = 0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._rng = random.Random(seed)
        self._clock = clock
        self._sleep = sleep

    @property
    def endpoint(self) -> str:
        return self._inner.endpoint

    async def generate(self, request: Request) -> RawCompletion:
        policy = self._policy
        started = self._clock()
        retry = 0
        last: TransientBackendError | None = None
        while True:
            try:
                if last is None:
                    completion = await self._inner.generate(request)
                else:
                    # A retry still running when the call's wait is up is cut off there.
                    remaining = policy.max_wait_s - (self._clock() - started)
                    async with asyncio.timeout(max(0.0, remaining)):
                        completion = await self._inner.generate(request)
            except TransientBackendError as error:
                delay = policy.delay(retry, error.retry_after, self._rng)
                spent = self._clock() - started
                out_of_count = policy.max_retries is not None and retry >= policy.max_retries
                if out_of_count or spent + delay > policy.max_wait_s:
                    _spent(error, retry, spent)
                    raise
                await self._sleep(delay)
                retry += 1
                last = error
                continue
            except TimeoutError:
                assert last is not None  # only a retry runs under the timeout
                cut = TransientBackendError(
                    f"{self.endpoint} was still answering retry {retry} when the call's "
                    f"retry.max_wait_s ({policy.max_wait_s:g} s) was up; last error: {last}",
                    connection=last.connection,
                )
                raise _spent(cut, retry, self._clock() - started) from None
            return replace(completion, retries=retry) if retry else completion

    async def aclose(self) -> None:
        await self._inner.aclose()
