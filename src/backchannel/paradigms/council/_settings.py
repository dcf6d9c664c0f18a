"""Settings of the council paradigm (the experiment file's `settings:` section)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from backchannel.backends import check_model
from backchannel.errors import ConfigError
from backchannel.judges import RULE_MODEL
from backchannel.paradigms._validity import ValiditySettings
from backchannel.paradigms.council._scenarios import load_scenario
from backchannel.paradigms.council._values import VALUE_DEFINITIONS

_NAME = re.compile(r"[a-z][a-z0-9_]*")

Delphi = Literal["none", "all_critiques", "partner_critique", "self_check"]
DELPHI_LEVELS: tuple[str, ...] = ("none", "all_critiques", "partner_critique", "self_check")
POOLS: tuple[str, ...] = ("A", "B")
Pool = Literal["A", "B"]

#: Profiling keywords per fixed value: their frequency per word scores a model's voice.
DEFAULT_KEYWORDS: dict[str, list[str]] = {
    "safety": ["safe", "safety", "harm", "risk", "protect", "danger", "secure", "caution"],
    "risk_tolerance": ["bold", "gain", "upside", "opportunity", "gamble", "chance", "venture"],
    "pragmatism": ["practical", "feasible", "workable", "realistic", "budget", "implement"],
    "performance": ["outcome", "result", "evidence", "effective", "measure", "impact", "data"],
    "simplicity": ["simple", "clear", "easy", "straightforward", "minimal", "transparent"],
    "creativity": ["new", "novel", "innovative", "creative", "experiment", "original", "idea"],
}


class ValueSpec(BaseModel):
    """One value perspective: a name, the definition evaluators and the verifier read, and the
    keywords that profiling counts."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Short name, e.g. 'fairness': lower-case letters, digits, '_'.")
    definition: str = Field(min_length=1, description="What judging from this value means.")
    keywords: list[str] = Field(
        default_factory=list, description="Words whose frequency marks this value (profiling)."
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"value name {name!r} must start with a lower-case letter and hold only "
                "lower-case letters, digits and '_'"
            )
        return name


def _fixed_values() -> list[ValueSpec]:
    return [
        ValueSpec(name=name, definition=definition, keywords=DEFAULT_KEYWORDS[name])
        for name, definition in VALUE_DEFINITIONS.items()
    ]


class CouncilSettings(ValiditySettings):
    """Three advocates debate a policy question; value-driven evaluators rank the options; a
    verifier scores each rationale's faithfulness to its value. The `pool` factor (A or B)
    selects one model for every role or one model per role; `delphi` selects an ablation."""

    model_config = ConfigDict(extra="forbid")
    scenarios: list[str] = Field(
        default_factory=lambda: ["child_welfare", "housing"],
        min_length=1,
        description="The items: shipped scenario names or paths to scenario YAML files.",
    )
    pool: Pool = Field(
        "A", description="A: one model for every role; B: one model per role from `pool_models`."
    )
    single_model: str = Field("local/smollm2", description="State A: the model of every role.")
    pool_models: list[str] = Field(
        default_factory=list,
        description="State B: the pool; role i gets model (i + replicate) mod pool size.",
    )
    verifier_model: str | None = Field(
        None, description="Model of the verifier in both states; default `single_model`."
    )
    verify: bool = Field(True, description="Run phase 3, consistency verification.")
    seventh_value: ValueSpec = Field(
        default_factory=lambda: ValueSpec(
            name="fairness",
            definition="Even-handedness: prefer the option that treats everyone affected "
            "equitably and protects those with the least power.",
            keywords=["fair", "fairness", "equal", "equity", "just", "justice", "rights"],
        ),
        description="The configurable seventh value perspective.",
    )
    allow_shared_values: bool = Field(
        False, description="Allow several evaluators to hold the same value."
    )
    evaluators: list[str] | None = Field(
        None,
        description="Values to seat, one evaluator each (default: the six fixed values and the "
        "seventh). A value may repeat only with `allow_shared_values`.",
    )
    profiling: bool = Field(
        False,
        description="State B: run every pool model on the profile prompt under every value and "
        "give each evaluator the model whose text scores highest on its value's keywords.",
    )
    profiling_distinct: bool = Field(
        False,
        description="With profiling: give no two evaluators the same model while the pool has an "
        "unused one (without it, one model may win every value and state B looks like state A).",
    )
    delphi: Delphi = Field("none", description="Ablation, unless a `delphi` factor sets it.")
    threshold: float = Field(
        0.7, ge=0, le=1, description="Verification score at or above which a voice is faithful."
    )
    advocate_words: int = Field(150, ge=10, description="Word limit of one advocate message.")
    rationale_words: int = Field(120, ge=10, description="Word limit of one rationale.")
    profile_words: int = Field(150, ge=10, description="Length asked of a profiling answer.")
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature of all roles.")
    advocate_max_tokens: int = Field(320, ge=1, description="Maximum tokens of an advocate turn.")
    evaluator_max_tokens: int = Field(400, ge=1, description="Maximum tokens of a ranking.")
    verifier_max_tokens: int = Field(32, ge=1, description="Maximum tokens of a verification.")
    profile_max_tokens: int = Field(320, ge=1, description="Maximum tokens of a profile answer.")
    argued_judge: str | None = Field(
        "rule",
        description="The inline judge of which option each advocate turn argues (task `argued`, "
        "labels stored under `argued`): `rule`, or a model PROVIDER/MODEL (one call per turn); "
        "null: none (label later with `backchannel judge RUN --kind argued`).",
    )
    argued_max_tokens: int = Field(
        16, ge=1, description="Maximum tokens of one `argued` verdict (a model judge)."
    )

    @field_validator("scenarios")
    @classmethod
    def _scenarios_load(cls, scenarios: list[str]) -> list[str]:
        ids = [load_scenario(name).id for name in scenarios]
        if len(set(ids)) != len(ids):
            raise ValueError(f"scenario ids repeat: {ids}")
        return scenarios

    @field_validator("argued_judge")
    @classmethod
    def _judge_is_rule_or_model(cls, judge: str | None) -> str | None:
        if judge is not None and judge != RULE_MODEL:
            try:
                check_model(judge)
            except ConfigError as error:
                raise ValueError(f"name `rule` or a model PROVIDER/MODEL: {error}") from None
        return judge

    @property
    def argued_model(self) -> str | None:
        """The model the inline `argued` judge calls (None: the rule judge, or no judge)."""
        return None if self.argued_judge in (None, RULE_MODEL) else self.argued_judge

    @field_validator("seventh_value")
    @classmethod
    def _seventh_is_new(cls, value: ValueSpec) -> ValueSpec:
        if value.name in VALUE_DEFINITIONS:
            raise ValueError(
                f"the seventh value {value.name!r} repeats a fixed value; fixed values are "
                f"{list(VALUE_DEFINITIONS)}"
            )
        return value

    @field_validator("evaluators")
    @classmethod
    def _roster_is_valid(cls, roster: list[str] | None, info: ValidationInfo) -> list[str] | None:
        seventh = info.data.get("seventh_value")
        if roster is None or seventh is None:
            return roster
        known = [*VALUE_DEFINITIONS, seventh.name]
        unknown = [v for v in roster if v not in known]
        if unknown:
            raise ValueError(f"unknown values {unknown}; known: {known}")
        if len(roster) < 2:
            raise ValueError("a council needs at least two evaluators")
        if not info.data.get("allow_shared_values", False) and len(set(roster)) != len(roster):
            raise ValueError(
                "a value repeats; every value needs its own evaluator unless "
                "allow_shared_values is true"
            )
        return roster

    @property
    def values(self) -> dict[str, ValueSpec]:
        """Every known value perspective by name: the six fixed ones and the seventh."""
        known = {v.name: v for v in _fixed_values()}
        known[self.seventh_value.name] = self.seventh_value
        return known

    @property
    def roster(self) -> list[str]:
        """The value of each evaluator, in seating order."""
        if self.evaluators is not None:
            return list(self.evaluators)
        return [*VALUE_DEFINITIONS, self.seventh_value.name]
