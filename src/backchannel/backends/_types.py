"""Value types of a model call: messages, settings, output constraints, requests, completions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]
Status = Literal["ok", "parse_failure", "error", "refusal", "truncated"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high")
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
MAX_TOKENS_FIELDS: tuple[str, ...] = ("max_tokens", "max_completion_tokens")
RESERVED_BODY_KEYS = frozenset(
    {
        "model",
        "messages",
        "stream",
        "n",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "reasoning_effort",
        "response_format",
        "grammar",
    }
)
"""Request-body keys the client writes itself; `extra_body` may not set them."""


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


def check_extra_body(extra_body: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-only copy of server-specific request fields; raises ValueError naming a bad key."""
    if not isinstance(extra_body, Mapping):
        raise ValueError(f"extra_body must be a mapping of request fields, got {extra_body!r}")
    if not extra_body:
        return {}
    for key in extra_body:
        if not isinstance(key, str) or not key:
            raise ValueError(f"extra_body keys must be non-empty strings, got {key!r}")
        if key in RESERVED_BODY_KEYS:
            raise ValueError(
                f"extra_body may not set {key!r}: the client writes that field itself (set "
                "max_tokens, temperature, top_p, stop and reasoning_effort as their own settings)"
            )
    try:
        copied: dict[str, Any] = json.loads(json.dumps(dict(extra_body), allow_nan=False))
    except (TypeError, ValueError) as error:
        raise ValueError(f"extra_body must hold only JSON values ({error})") from None
    return copied


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """Sampling settings of one call; every field is part of the cache key.

    `reasoning_effort` is sent as the OpenAI API field; `stop` lists stop sequences;
    `extra_body` holds server-specific fields (vLLM's `min_p`, `chat_template_kwargs`, ...)
    merged into the request body. Unset (None, empty) fields are not sent. The hosted API's
    reasoning models take the limit as `max_completion_tokens` (`max_tokens_field`) and refuse
    any temperature or top_p but their defaults (`sampling=False` sends neither).
    """

    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 256
    reasoning_effort: ReasoningEffort | None = None
    stop: tuple[str, ...] = ()
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    max_tokens_field: MaxTokensField = "max_tokens"
    sampling: bool = True

    def __post_init__(self) -> None:
        if self.max_tokens_field not in MAX_TOKENS_FIELDS:
            raise ValueError(
                f"max_tokens_field must be one of {', '.join(MAX_TOKENS_FIELDS)}, "
                f"got {self.max_tokens_field!r}"
            )
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be within 0..2, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be within (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, "
                f"got {self.reasoning_effort!r}"
            )
        if isinstance(self.stop, str):
            raise ValueError("stop must be a list of stop sequences, not one string")
        stop = tuple(self.stop)
        if any(not isinstance(s, str) or not s for s in stop):
            raise ValueError(f"stop sequences must be non-empty strings, got {list(stop)!r}")
        object.__setattr__(self, "stop", stop)
        object.__setattr__(self, "extra_body", check_extra_body(self.extra_body))

    def under(
        self,
        *,
        reasoning_effort: ReasoningEffort | None = None,
        stop: tuple[str, ...] = (),
        extra_body: Mapping[str, Any] | None = None,
        max_tokens_field: MaxTokensField = "max_tokens",
        sampling: bool = True,
    ) -> GenerationSettings:
        """These settings over per-model defaults: a value set here wins, `extra_body` merges
        key by key (this call's keys over the defaults'), and a model that takes no sampling
        settings gets none."""
        if (
            reasoning_effort is None
            and not stop
            and not extra_body
            and max_tokens_field == "max_tokens"
            and sampling
        ):
            return self
        return GenerationSettings(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort or reasoning_effort,
            stop=self.stop or stop,
            extra_body={**(extra_body or {}), **self.extra_body},
            max_tokens_field=(
                self.max_tokens_field if self.max_tokens_field != "max_tokens" else max_tokens_field
            ),
            sampling=self.sampling and sampling,
        )


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


CallSource = Literal["paradigm", "judge", "screening"]
CALL_SOURCES: tuple[str, ...] = ("paradigm", "judge", "screening")


@dataclass(frozen=True, slots=True)
class Seen:
    """One message in the asking agent's memory view, as its prompt shows it.

    `speaker` is the name the prompt gives it (the agent's own messages appear under its
    self-name, "You" unless a re-ask anonymises it); `own` says the message is the agent's own,
    whatever name it is shown under.
    """

    speaker: str
    text: str
    round: int
    turn: int
    own: bool = False


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What a call is, set where it is made, so a simulated population answers by meaning, never
    by the prompt's wording. Real backends ignore it and it is no part of any cache key.

    `source` is the layer that asks: a paradigm's own prompt, a judge task or the screening
    question; `prompt` is that layer's name for it (the paradigm's event name, the judge task's
    name, `screen`). `item` is the item's payload (its planted knowledge); `facts` are what the
    caller attaches (the agent's private parameters, what the call is about); `seen` is the
    agent's memory view, message by message.
    """

    prompt: str
    source: CallSource = "paradigm"
    paradigm: str = ""
    agent: str = ""
    role: str = ""
    round: int | None = None
    item_id: str = ""
    item: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    seen: tuple[Seen, ...] = ()

    def __post_init__(self) -> None:
        if self.source not in CALL_SOURCES:
            raise ValueError(f"call source must be one of {', '.join(CALL_SOURCES)}")


@dataclass(frozen=True, slots=True)
class Request:
    """One model call as the engine asks for it.

    `replicate` separates sampled replicates in the cache; `attempt` separates re-asks after a
    parse failure; `critical` marks calls on a conversation's chain of dependent turns, which a
    saturated endpoint serves first. `call` says what the call is (see `CallInfo`): it changes
    no real model's answer, so it is compared by no one and enters no cache key.
    """

    model: str
    messages: tuple[Message, ...]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    constraint: OutputConstraint | None = None
    seed: int | None = None
    replicate: int = 0
    attempt: int = 0
    critical: bool = True
    call: CallInfo | None = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if "/" not in self.model and self.model != "sim" and not self.model.startswith("sim#"):
            raise ValueError(f"model must be 'provider/model', got {self.model!r}")
        if not self.messages:
            raise ValueError("a request needs at least one message")


SERVER_TIMINGS = ("prompt_n", "cache_n", "predicted_n", "prompt_ms", "predicted_ms")
"""What a llama.cpp server reports of each call (its response's `timings`): prompt tokens it
evaluated, prompt tokens it reused from its cache, tokens generated, and the milliseconds of the
prompt and generation phases. prompt_n + cache_n is the prompt it was sent."""


def add_timings(
    total: Mapping[str, float] | None, more: Mapping[str, float] | None
) -> Mapping[str, float] | None:
    """Two calls' timings added up key by key; None when neither has any."""
    if total is None or more is None:
        return more if total is None else total
    return {key: round(total.get(key, 0) + more.get(key, 0), 3) for key in SERVER_TIMINGS}


@dataclass(frozen=True, slots=True)
class RawCompletion:
    """What a backend returns: text and usage, before any parsing.

    `text` is the message content as sent (think blocks included); `reasoning` is the server's
    separate reasoning field (`reasoning_content` or `reasoning`), if any. `completion_tokens`
    includes `reasoning_tokens`, as the OpenAI API counts them. `timings` is a llama.cpp
    server's own account of the call (see `SERVER_TIMINGS`), None from other servers.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"
    cached: bool = False
    retries: int = 0
    reasoning: str = ""
    reasoning_tokens: int = 0
    timings: Mapping[str, float] | None = field(default=None, hash=False)
    origin: str | None = None
    """Answered from the response cache: the conversation whose call produced the answer
    (None when not recorded)."""


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished call: the answer text, the parsed value and an explicit status.

    `text` is the answer only; `reasoning` is what the model thought before it (from the
    server's reasoning field or a think block), kept apart so it never enters a room, a parser
    or a judge. A failure is data: `status` says what went wrong and `error` why; `value` is
    then None. `truncated` means the completion hit max_tokens inside its reasoning.
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
    reasoning: str = ""
    reasoning_tokens: int = 0
    prompt: tuple[Message, ...] = ()
    """The messages of the last attempt, as the model received them (format sentence and
    re-asks included), so a reader can see exactly what produced `text`."""
    timings: Mapping[str, float] | None = field(default=None, hash=False)
    """The llama.cpp server's timings summed over the attempts (`SERVER_TIMINGS`), if any."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"
