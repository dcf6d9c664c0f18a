"""The experiment file's `generation` rules: per-model call defaults for reasoning models and
server-specific request fields.

Every field is checked when the file is loaded, and each rule is built into the value the
backends take (`ModelSettings`) while it is validated, so whatever the backends would refuse
later is refused here, with the field's place in the file.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backchannel.backends import ModelSettings, ThinkTags, check_extra_body


class ThinkTagsConfig(BaseModel):
    """How a model marks its reasoning inside the text it sends."""

    model_config = ConfigDict(extra="forbid")
    open: str = Field("<think>", min_length=1, description="The opening tag.")
    close: str = Field("</think>", min_length=1, description="The closing tag.")
    opened_by_template: bool = Field(
        False,
        description="The chat template opens the block, so the output starts inside it.",
    )

    @field_validator("open", "close")
    @classmethod
    def _tag_not_blank(cls, tag: str) -> str:
        if not tag.strip():
            raise ValueError("a think tag must hold more than spaces and line breaks")
        return tag

    @model_validator(mode="after")
    def _tags_differ(self) -> ThinkTagsConfig:
        if self.open == self.close:
            raise ValueError(
                f"open and close are both {self.open!r}; the closing tag must differ from the "
                "opening one (e.g. <think> and </think>)"
            )
        self.to_tags()
        return self

    def to_tags(self) -> ThinkTags:
        return ThinkTags(self.open, self.close, self.opened_by_template)


class GenerationConfig(BaseModel):
    """Call defaults for the models whose names match `models`; a call's own settings win."""

    model_config = ConfigDict(extra="forbid")
    models: str = Field(min_length=1, description="Glob over model strings, e.g. 'openai/qwen3-*'.")
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = Field(
        None, description="Sent as the OpenAI API field reasoning_effort; unset: not sent."
    )
    stop: list[str] = Field(default_factory=list, description="Stop sequences.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Server-specific request fields, over the endpoint's extra_body.",
    )
    think_tags: ThinkTagsConfig | None = Field(
        default_factory=ThinkTagsConfig,
        description="How reasoning is marked in the text; null keeps the text as sent.",
    )
    own_reasoning: bool = Field(
        False, description="Agents of these models see their own earlier reasoning."
    )
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="The request field of the token limit; the hosted OpenAI API's reasoning "
        "models take max_completion_tokens.",
    )
    sampling: bool = Field(
        True,
        description="Send temperature and top_p; false for models that accept only their "
        "defaults (the hosted OpenAI API's reasoning models).",
    )

    _check_extra_body = field_validator("extra_body")(check_extra_body)

    @field_validator("stop")
    @classmethod
    def _stops_not_empty(cls, stop: list[str]) -> list[str]:
        if any(not s for s in stop):
            raise ValueError("stop sequences must be non-empty")
        repeated = sorted({s for s in stop if stop.count(s) > 1})
        if repeated:
            raise ValueError(f"repeats the stop sequence {repeated[0]!r}; list each once")
        return stop

    @model_validator(mode="after")
    def _builds(self) -> GenerationConfig:
        """The rule as the backends take it, so nothing they check fails after loading."""
        self.to_settings()
        return self

    def to_settings(self) -> ModelSettings:
        return ModelSettings(
            models=self.models,
            reasoning_effort=self.reasoning_effort,
            stop=tuple(self.stop),
            extra_body=self.extra_body,
            think_tags=None if self.think_tags is None else self.think_tags.to_tags(),
            own_reasoning=self.own_reasoning,
            max_tokens_field=self.max_tokens_field,
            sampling=self.sampling,
        )
