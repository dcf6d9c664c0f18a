"""Bounded retries with exponential backoff and full jitter; honours Retry-After."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace

from backchannel.backends._base import Backend
from backchannel.backends._errors import TransientBackendError
from backchannel.backends._types import RawCompletion, Request


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a transient failure."""

    max_retries: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 300.0

    def __post_init__(self) -> None:
        if min(self.max_retries, self.base_delay_s, self.max_delay_s, self.max_retry_after_s) < 0:
            raise ValueError("retry settings must not be negative")

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter within the exponential cap, but never sooner than the server asked, up to
        `max_retry_after_s` (a Retry-After of an hour must not stall a run for an hour)."""
        cap = min(self.max_delay_s, self.base_delay_s * (2**retry))
        jittered = rng.uniform(0, cap)
        if retry_after is not None:
            return max(min(retry_after, self.max_retry_after_s), jittered)
        return jittered


class RetryingBackend:
    """Retries transient errors; the last one propagates with the retry count attached."""

    def __init__(self, inner: Backend, policy: RetryPolicy, seed: int = 0) -> None:
        self._inner = inner
        self._policy = policy
        self._rng = random.Random(seed)

    @property
    def endpoint(self) -> str:
        return self._inner.endpoint

    async def generate(self, request: Request) -> RawCompletion:
        retry = 0
        while True:
            try:
                completion = await self._inner.generate(request)
            except TransientBackendError as error:
                if retry >= self._policy.max_retries:
                    error.retries = retry  # type: ignore[attr-defined]
                    raise
                await asyncio.sleep(self._policy.delay(retry, error.retry_after, self._rng))
                retry += 1
                continue
            return replace(completion, retries=retry) if retry else completion

    async def aclose(self) -> None:
        await self._inner.aclose()
