"""The experiment file, validated with pydantic: every field documented, unknown fields refused."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backchannel.backends import (
    EndpointSettings,
    LocalSettings,
    ModelSettings,
    Price,
    RetryPolicy,
    check_extra_body,
)
from backchannel.experiment._generation import GenerationConfig


class PriceConfig(BaseModel):
    """US dollars per million tokens, for cost accounting."""

    model_config = ConfigDict(extra="forbid")
    prompt_per_million: float = Field(0.0, ge=0)
    completion_per_million: float = Field(0.0, ge=0)


class EndpointConfig(BaseModel):
    """An OpenAI-compatible server for the `openai/...` models whose names match `models`."""

    model_config = ConfigDict(extra="forbid")
    models: str = Field("openai/*", description="Glob over model strings, e.g. 'openai/llama-*'.")
    base_url: str | None = Field(
        None, description="Server URL ending in /v1; else OPENAI_BASE_URL."
    )
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key; else OPENAI_API_KEY."
    )
    api_key: str | None = Field(
        None, description="The key itself (never stored); prefer api_key_env.", repr=False
    )
    max_in_flight: int = Field(64, ge=1, description="In-flight requests; well above server slots.")
    timeout_s: float = Field(120.0, gt=0, description="Seconds before a request times out.")
    constrained: Literal["json_schema", "grammar", "none"] = Field(
        "json_schema",
        description="Constrained decoding: json_schema (OpenAI, vLLM, SGLang), grammar (llama.cpp "
        "GBNF), none (validate and re-ask only).",
    )
    price: PriceConfig = Field(default_factory=PriceConfig)
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Server-specific request fields merged into every request to this endpoint "
        "(e.g. vLLM's min_p, repetition_penalty, chat_template_kwargs).",
    )

    _check_extra_body = field_validator("extra_body")(check_extra_body)

    def to_settings(self) -> EndpointSettings:
        return EndpointSettings(
            models=self.models,
            base_url=self.base_url,
            api_key=self.api_key,
            api_key_env=self.api_key_env,
            max_in_flight=self.max_in_flight,
            timeout_s=self.timeout_s,
            constrained=self.constrained,
            price=Price(self.price.prompt_per_million, self.price.completion_per_million),
            extra_body=self.extra_body,
        )


class LocalConfig(BaseModel):
    """The embedded llama.cpp server for `local/...` models."""

    model_config = ConfigDict(extra="forbid")
    parallel: int = Field(4, ge=1, description="Parallel slots (requests decoded together).")
    context_per_slot: int = Field(4096, ge=256, description="Context length of each slot.")
    threads: int | None = Field(None, ge=1, description="CPU threads; default all cores but one.")
    max_in_flight: int | None = Field(
        None,
        ge=1,
        description="In-flight requests; default the slots, so the client admits turns first.",
    )

    def to_settings(self) -> LocalSettings:
        return LocalSettings(self.parallel, self.context_per_slot, self.threads, self.max_in_flight)


class RetryConfig(BaseModel):
    """Retries of rate limits, server errors, timeouts and dropped connections."""

    model_config = ConfigDict(extra="forbid")
    max_retries: int = Field(6, ge=0)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(30.0, ge=0)
    max_retry_after_s: float = Field(
        300.0, ge=0, description="Longest server-requested wait (Retry-After) honoured."
    )

    def to_policy(self) -> RetryPolicy:
        return RetryPolicy(
            self.max_retries, self.base_delay_s, self.max_delay_s, self.max_retry_after_s
        )


def same_level(a: Any, b: Any) -> bool:
    """Levels match when equal and both or neither are booleans (YAML's true is not 1)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


class ReplicateRule(BaseModel):
    """A different number of replicates for the cells whose levels match `when`."""

    model_config = ConfigDict(extra="forbid")
    when: dict[str, Any] = Field(min_length=1, description="Factor levels a cell must have.")
    replicates: int = Field(ge=1, description="Conversations per item for matching cells.")


class Experiment(BaseModel):
    """One experiment file. Precedence: command line > experiment file > paradigm defaults."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, description="A name for the experiment.")
    paradigm: str = Field(description="discussion, peer_pressure, dyad or council.")
    seed: int = Field(0, description="Experiment seed; every conversation's seed derives from it.")
    replicates: int = Field(1, ge=1, description="Conversations per cell and item.")
    replicates_by: list[ReplicateRule] = Field(
        default_factory=list,
        description="Per-cell replicate counts; the first rule whose levels match wins.",
    )
    factors: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Design factors and their levels; cells are all combinations.",
    )
    exclude: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Partial combinations of levels to leave out of the design.",
    )
    items_limit: int | None = Field(None, ge=1, description="Use only the first N items.")
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The paradigm's own settings (see its documentation)."
    )
    endpoints: list[EndpointConfig] = Field(default_factory=list)
    generation: list[GenerationConfig] = Field(
        default_factory=list,
        description="Per-model call defaults (reasoning effort, stop, extra body, think tags); "
        "the first rule whose glob matches a model applies.",
    )
    local: LocalConfig = Field(default_factory=LocalConfig)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    max_reasks: int = Field(2, ge=0, description="Re-asks after an unreadable constrained answer.")

    def model_settings(self) -> list[ModelSettings]:
        """The `generation` rules as the backends take them."""
        return [rule.to_settings() for rule in self.generation]

    def replicates_for(self, cell: dict[str, Any]) -> int:
        """The replicate count of one cell: the first matching rule, else `replicates`."""
        for rule in self.replicates_by:
            if all(same_level(cell.get(name), level) for name, level in rule.when.items()):
                return rule.replicates
        return self.replicates

    @model_validator(mode="after")
    def _rules_name_factors(self) -> Experiment:
        for index, rule in enumerate(self.replicates_by):
            unknown = sorted(set(rule.when) - set(self.factors))
            if unknown:
                raise ValueError(
                    f"replicates_by.{index}.when names unknown factors {unknown}; "
                    f"factors are {sorted(self.factors)}"
                )
        return self

    @field_validator("factors")
    @classmethod
    def _levels_not_empty(cls, factors: dict[str, list[Any]]) -> dict[str, list[Any]]:
        from backchannel.analysis import CONVERSATION_BASE_COLUMNS

        for name, levels in factors.items():
            if name in CONVERSATION_BASE_COLUMNS:
                raise ValueError(
                    f"factor name {name!r} is a column of the conversations table; rename it "
                    f"(reserved: {', '.join(CONVERSATION_BASE_COLUMNS)})"
                )
            if not levels:
                raise ValueError(f"factor {name!r} has no levels")
            if len({repr(level) for level in levels}) != len(levels):
                raise ValueError(f"factor {name!r} repeats a level")
        return factors
