"""The one backend interface every provider and wrapper implements."""

from __future__ import annotations

from typing import Protocol

from backchannel.backends._types import RawCompletion, Request


class Backend(Protocol):
    """Turns a request into raw text; wrappers add retries, limits, caching and accounting."""

    @property
    def endpoint(self) -> str:
        """Where requests go (a base URL, a model file, `sim`): part of the cache key."""
        ...

    async def generate(self, request: Request) -> RawCompletion: ...

    async def aclose(self) -> None: ...
