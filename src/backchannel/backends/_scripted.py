"""A client that answers every model with the built-in scripted sim, through an in-memory
response cache: what a dry run uses to see which calls paired arms share, calling nothing."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from backchannel.backends._cache import CachedBackend, ResponseCache
from backchannel.backends._client import LLMClient, Route
from backchannel.backends._sim import SimBackend


def scripted_client(models: Iterable[str]) -> LLMClient:
    """Every model answered by `sim` (an answer fixed by the request: equal prompts and seeds,
    equal answers), cached in memory so that a repeated call is a cache hit."""
    backend = CachedBackend(SimBackend(), ResponseCache(Path(":memory:")))
    return LLMClient({model: Route(backend) for model in models}, max_reasks=0)
