"""Usage accounting: calls, tokens, cache hits, retries, failures and cost, per model."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Annotated

from pydantic import ConfigDict, Field


@dataclass
class Usage:
    """Counters for one model (or a total); `calls` counts every request, cache hits included.

    `completion_tokens` includes `reasoning_tokens` (where the server reports them);
    `truncated` counts answers cut off by max_tokens inside their reasoning.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    reasks: int = 0
    failures: int = 0
    parse_failures: int = 0
    cost: float = 0.0
    reasoning_tokens: int = 0
    truncated: int = 0

    def add(self, other: Usage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million prompt and completion tokens, for cost accounting."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    prompt_per_million: Annotated[float, Field(ge=0)] = 0.0
    completion_per_million: Annotated[float, Field(ge=0)] = 0.0

    def __post_init__(self) -> None:
        if self.prompt_per_million < 0 or self.completion_per_million < 0:
            raise ValueError("prices must not be negative")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.prompt_per_million
            + completion_tokens * self.completion_per_million
        ) / 1e6


@dataclass
class UsageMeter:
    """Per-model usage, updated as calls finish; read by the progress display and the store."""

    by_model: dict[str, Usage] = field(default_factory=dict)

    def model(self, name: str) -> Usage:
        usage = self.by_model.get(name)
        if usage is None:
            usage = self.by_model[name] = Usage()
        return usage

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_model.values():
            total.add(usage)
        return total

    def merge(self, other: UsageMeter) -> None:
        for name, usage in other.by_model.items():
            self.model(name).add(usage)
