"""Value types of a model call: messages, settings, output constraints, requests, completions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]
Status = Literal["ok", "parse_failure", "error", "refusal"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown message role {self.role!r}")

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """Sampling settings of one call; every field is part of the cache key."""

    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 256

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be within 0..2, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be within (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")


@dataclass(frozen=True, slots=True)
class LabelSet:
    """The answer must be exactly one of these labels."""

    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError("a label set needs at least two distinct labels")

    def describe(self) -> str:
        return "exactly one of: " + ", ".join(self.labels)


@dataclass(frozen=True, slots=True)
class IntRange:
    """The answer must be one whole number within [low, high]."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"empty integer range {self.low}..{self.high}")

    def describe(self) -> str:
        return f"a single whole number from {self.low} to {self.high}"


@dataclass(frozen=True, slots=True)
class Ranking:
    """The answer must order every option exactly once, best first."""

    options: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.options) < 2 or len(set(self.options)) != len(self.options):
            raise ValueError("a ranking needs at least two distinct options")

    def describe(self) -> str:
        return (
            "a ranking of all options, best first, as a comma-separated list using exactly "
            "these names: " + ", ".join(self.options)
        )


@dataclass(frozen=True, slots=True)
class JsonSchema:
    """The answer must be a JSON value valid under this (small) JSON schema."""

    schema_text: str
    name: str = "answer"

    def __post_init__(self) -> None:
        json.loads(self.schema_text)

    @classmethod
    def of(cls, schema: dict[str, Any], name: str = "answer") -> JsonSchema:
        return cls(json.dumps(schema, sort_keys=True, separators=(",", ":")), name)

    @property
    def schema(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.schema_text)
        return loaded

    def describe(self) -> str:
        return "a single JSON value matching this schema: " + self.schema_text


OutputConstraint = LabelSet | IntRange | Ranking | JsonSchema


def constraint_key(constraint: OutputConstraint | None) -> str:
    """A canonical text of a constraint, used in cache keys."""
    if constraint is None:
        return ""
    if isinstance(constraint, LabelSet):
        return "labels:" + "|".join(constraint.labels)
    if isinstance(constraint, IntRange):
        return f"int:{constraint.low}:{constraint.high}"
    if isinstance(constraint, Ranking):
        return "ranking:" + "|".join(constraint.options)
    return "json:" + constraint.schema_text


@dataclass(frozen=True, slots=True)
class Request:
    """One model call as the engine asks for it.

    `replicate` separates sampled replicates in the cache; `attempt` separates re-asks after a
    parse failure; `critical` marks calls on a conversation's chain of dependent turns, which a
    saturated endpoint serves first.
    """

    model: str
    messages: tuple[Message, ...]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    constraint: OutputConstraint | None = None
    seed: int | None = None
    replicate: int = 0
    attempt: int = 0
    critical: bool = True

    def __post_init__(self) -> None:
        if "/" not in self.model and self.model != "sim":
            raise ValueError(f"model must be 'provider/model', got {self.model!r}")
        if not self.messages:
            raise ValueError("a request needs at least one message")


@dataclass(frozen=True, slots=True)
class RawCompletion:
    """What a backend returns: text and usage, before any parsing."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"
    cached: bool = False
    retries: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished call: the text, the parsed value and an explicit status.

    A failure is data: `status` says what went wrong and `error` why; `value` is then None.
    """

    text: str
    value: Any
    status: Status
    model: str
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    retries: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"
