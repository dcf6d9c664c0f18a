"""How the experiment file says where models are served: OpenAI-compatible endpoints and the
embedded llama.cpp server (validated into these types directly, so each field and its
documentation exists once)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from backchannel.backends._replica_urls import expand_urls
from backchannel.backends._types import check_extra_body
from backchannel.backends._usage import Price


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    """An OpenAI-compatible server for the `openai/...` models whose names match `models`.

    The experiment file's `endpoints:` entries are validated into this type directly, so the
    fields, their defaults and their documentation exist once. `extra_body` holds server-specific
    request fields merged into every request to this endpoint (under the model's and the call's).
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    models: Annotated[str, Field(description="Glob over model strings, e.g. 'openai/llama-*'.")] = (
        "openai/*"
    )
    base_url: Annotated[
        str | None, Field(description="Server URL ending in /v1; else OPENAI_BASE_URL.")
    ] = None
    base_urls: Annotated[
        tuple[str, ...],
        Field(
            description="Several servers of the same model (replicas), instead of base_url; "
            "brace patterns name many at once, e.g. 'http://gpu{1..3}:{8000..8003}/v1'. Each "
            "conversation keeps to one replica; max_in_flight then bounds each replica."
        ),
    ] = ()
    api_key: Annotated[
        str | None, Field(description="The key itself (never stored); prefer api_key_env.")
    ] = field(default=None, repr=False)
    api_key_env: Annotated[
        str | None,
        Field(description="Name of the environment variable holding the key; else OPENAI_API_KEY."),
    ] = None
    max_in_flight: Annotated[
        int,
        Field(
            ge=1,
            description="In-flight requests (per replica); keep it well above the server's "
            "slots. With adaptive_in_flight, the upper limit.",
        ),
    ] = 64
    adaptive_in_flight: Annotated[
        bool,
        Field(
            description="Adapt the in-flight bound (AIMD): grow while latency holds, halve on "
            "rate limits (429) and timeouts, between min_in_flight and max_in_flight."
        ),
    ] = False
    min_in_flight: Annotated[
        int, Field(ge=1, description="Lower limit (and start) of an adaptive in-flight bound.")
    ] = 4
    timeout_s: Annotated[
        float,
        Field(gt=0, description="Seconds one request may take in all: connect, wait and body."),
    ] = 120.0
    constrained: Annotated[
        Literal["json_schema", "grammar", "none"],
        Field(
            description="Constrained decoding: json_schema (OpenAI, vLLM, SGLang), grammar "
            "(llama.cpp GBNF), none (validate and re-ask only)."
        ),
    ] = "json_schema"
    price: Annotated[Price, Field(description="US dollars per million tokens.")] = Price()
    extra_body: Annotated[
        Mapping[str, Any],
        Field(
            description="Server-specific request fields merged into every request to this "
            "endpoint (e.g. vLLM's min_p, repetition_penalty, chat_template_kwargs)."
        ),
    ] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if self.min_in_flight < 1:
            raise ValueError("min_in_flight must be at least 1")
        if self.adaptive_in_flight and self.min_in_flight > self.max_in_flight:
            raise ValueError(
                f"min_in_flight ({self.min_in_flight}) is above max_in_flight "
                f"({self.max_in_flight}); lower min_in_flight or raise max_in_flight"
            )
        if self.base_url is not None and self.base_urls:
            raise ValueError("give either base_url (one server) or base_urls (replicas), not both")
        object.__setattr__(self, "base_urls", expand_urls(self.base_urls))
        object.__setattr__(self, "extra_body", check_extra_body(self.extra_body))

    @property
    def urls(self) -> tuple[str, ...]:
        """The servers of this endpoint: its replicas, or its one base_url (or none: the SDK's
        environment default)."""
        if self.base_urls:
            return self.base_urls
        return (self.base_url,) if self.base_url is not None else ()


@dataclass(frozen=True, slots=True)
class LocalSettings:
    """The embedded llama.cpp server for `local/...` models (the experiment file's `local:`)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    parallel: Annotated[
        int, Field(ge=1, description="Parallel slots (requests decoded together).")
    ] = 4
    context_per_slot: Annotated[int, Field(ge=256, description="Context length of each slot.")] = (
        4096
    )
    threads: Annotated[
        int | None,
        Field(ge=1, description="CPU threads; default the cores left free when the model loads."),
    ] = None
    max_in_flight: Annotated[
        int | None,
        Field(ge=1, description="In-flight requests; default the slots, so turns go first."),
    ] = None
    slot_affinity: Annotated[
        bool,
        Field(
            description="Each agent's calls one after another on its own slot, so each reuses "
            "its previous prompt from the server's cache."
        ),
    ] = True
