"""The experiment file, validated with pydantic: every field documented, unknown fields refused."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backchannel.backends import (
    EndpointSettings,
    LocalSettings,
    ModelSettings,
    PopulationParams,
    RetryPolicy,
)
from backchannel.experiment._generation import GenerationConfig

DEFAULT_MAX_CONVERSATIONS = 1_000_000
"""The default ceiling on a design's size (combinations of levels, and conversations)."""


def same_level(a: Any, b: Any) -> bool:
    """Levels match when equal and both or neither are booleans (YAML's true is not 1)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


class ReplicateRule(BaseModel):
    """A different number of replicates for the cells whose levels match `when`."""

    model_config = ConfigDict(extra="forbid")
    when: dict[str, Any] = Field(min_length=1, description="Factor levels a cell must have.")
    replicates: int = Field(ge=1, description="Conversations per item for matching cells.")


class StoppingSettings(BaseModel):
    """Precision stopping (`run --until`): replicates run in batches until every named headline
    contrast's 95 % interval is narrow enough, or `replicates` (the ceiling) is reached."""

    model_config = ConfigDict(extra="forbid")
    until: str | None = Field(
        None,
        description="The target, `NAME.halfwidth<=X` joined by `and` (NAME one of the paradigm's "
        "headline contrasts); none: the whole design runs. `--until` replaces it.",
    )
    batch: int | None = Field(
        None,
        ge=1,
        description="Replicates per cell and item added by each batch (default a "
        "tenth of `replicates`, at least 1).",
    )
    first: int | None = Field(
        None, ge=1, description="Replicates per cell and item of the first batch (default `batch`)."
    )


class Experiment(BaseModel):
    """One experiment file. Precedence: command line > experiment file > paradigm defaults."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, description="A name for the experiment.")
    paradigm: str = Field(
        description="A paradigm name (discussion, peer_pressure, dyad, council, or one an "
        "installed package registers) or a package.module:Class path."
    )
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
    max_conversations: int = Field(
        DEFAULT_MAX_CONVERSATIONS,
        ge=1,
        description="The largest design that runs: a design with more combinations of levels "
        "or more conversations is refused before anything is expanded; raise it to run one.",
    )
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The paradigm's own settings (see its documentation)."
    )
    endpoints: list[EndpointSettings] = Field(
        default_factory=list, description="OpenAI-compatible servers, by model glob."
    )
    generation: list[GenerationConfig] = Field(
        default_factory=list,
        description="Per-model call defaults (reasoning effort, stop, extra body, think tags); "
        "the first rule whose glob matches a model applies.",
    )
    local: LocalSettings = Field(default_factory=LocalSettings)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    max_reasks: int = Field(2, ge=0, description="Re-asks after an unreadable constrained answer.")
    share_paired_calls: bool = Field(
        True,
        description="Paired arms share their common calls: cells that differ only in a "
        "paradigm's paired factors (testimony: condition, intervention) take their calls' seeds "
        "from the item, replicate, agent and the call's place, so a call the arms make alike is "
        "made once and answered from the cache in the other arm; false: every conversation "
        "seeds its own calls.",
    )
    stopping: StoppingSettings = Field(
        default_factory=StoppingSettings,
        description="Precision stopping: the target and its batches (see docs/statistics.md).",
    )
    population: PopulationParams | None = Field(
        None,
        description="Planted parameters of the simulated population (`sim/population`); see "
        "docs/population.md.",
    )

    def model_settings(self) -> list[ModelSettings]:
        """The `generation` rules as the backends take them."""
        return [rule.to_settings() for rule in self.generation]

    def replicates_for(self, cell: dict[str, Any]) -> int:
        """The replicate count of one cell: the first matching rule, else `replicates`."""
        for rule in self.replicates_by:
            if all(same_level(cell.get(name), level) for name, level in rule.when.items()):
                return rule.replicates
        return self.replicates

    @field_validator("generation")
    @classmethod
    def _globs_distinct(cls, rules: list[GenerationConfig]) -> list[GenerationConfig]:
        first: dict[str, int] = {}
        for index, rule in enumerate(rules):
            if rule.models in first:
                raise ValueError(
                    f"rule {index} repeats the models glob {rule.models!r} of rule "
                    f"{first[rule.models]}; the first matching rule wins, so this one would never "
                    "apply: merge the two"
                )
            first[rule.models] = index
        return rules

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
