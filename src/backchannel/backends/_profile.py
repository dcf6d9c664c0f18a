"""Per-model call defaults: reasoning effort, stop sequences, extra body fields, think tags.

An experiment names them once per model glob (first match wins) instead of in every paradigm;
a call's own settings still win over them, and `extra_body` merges key by key: endpoint, then
model, then the call.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from backchannel.backends._reasoning import ThinkTags
from backchannel.backends._types import (
    REASONING_EFFORTS,
    GenerationSettings,
    MaxTokensField,
    ReasoningEffort,
    Request,
    check_extra_body,
)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Defaults for every call to the models matching `models` (a glob over model strings).

    `think_tags` None keeps the text as it is (no think blocks are taken out);
    `own_reasoning` lets an agent of this model see its own earlier reasoning in its later
    prompts (never anyone else's), unless the agent itself says otherwise.
    `max_tokens_field` and `sampling`: see GenerationSettings (for the hosted API's reasoning
    models: `max_completion_tokens`, no sampling settings).
    """

    models: str = "*"
    reasoning_effort: ReasoningEffort | None = None
    stop: tuple[str, ...] = ()
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    think_tags: ThinkTags | None = ThinkTags()
    own_reasoning: bool = False
    max_tokens_field: MaxTokensField = "max_tokens"
    sampling: bool = True

    def __post_init__(self) -> None:
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, "
                f"got {self.reasoning_effort!r}"
            )
        # The same checks as a call's settings, so a bad default fails when it is read.
        GenerationSettings(
            stop=tuple(self.stop),
            extra_body=self.extra_body,
            max_tokens_field=self.max_tokens_field,
        )
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "extra_body", check_extra_body(self.extra_body))

    def over_endpoint(self, endpoint_body: Mapping[str, Any]) -> ModelSettings:
        """These defaults with the endpoint's extra body underneath (the model's keys win)."""
        if not endpoint_body:
            return self
        return ModelSettings(
            models=self.models,
            reasoning_effort=self.reasoning_effort,
            stop=self.stop,
            extra_body={**endpoint_body, **self.extra_body},
            think_tags=self.think_tags,
            own_reasoning=self.own_reasoning,
            max_tokens_field=self.max_tokens_field,
            sampling=self.sampling,
        )

    def apply(self, request: Request) -> Request:
        """The request with these defaults under its own settings."""
        settings = request.settings.under(
            reasoning_effort=self.reasoning_effort,
            stop=self.stop,
            extra_body=self.extra_body,
            max_tokens_field=self.max_tokens_field,
            sampling=self.sampling,
        )
        return request if settings is request.settings else replace(request, settings=settings)


def model_settings_for(model: str, rules: Sequence[ModelSettings]) -> ModelSettings:
    """The first rule whose glob matches `model`; else the defaults (think tags, nothing sent)."""
    for rule in rules:
        if fnmatch.fnmatchcase(model, rule.models):
            return rule
    return ModelSettings()
