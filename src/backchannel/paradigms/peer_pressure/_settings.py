"""Settings of the peer-pressure paradigm (the experiment file's `settings:` section)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel.datasets import DatasetSource
from backchannel.engine import OrderPolicy


class JudgeSettings(BaseModel):
    """The judge that labels private answers and public turns while the conversation runs."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["rule", "llm"] = Field("rule", description="rule (no model) or llm.")
    model: str | None = Field(None, description="The judge model (kind llm only).")
    name: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="The name its labels are stored under; default `rule` or `llm`.",
    )
    max_tokens: int = Field(16, ge=1, description="Maximum tokens of one verdict (kind llm).")

    @model_validator(mode="after")
    def _model_matches_kind(self) -> JudgeSettings:
        if self.kind == "llm" and not self.model:
            raise ValueError("an llm judge needs a model")
        if self.kind == "rule" and self.model is not None:
            raise ValueError("a rule judge takes no model; use kind: llm for a model judge")
        return self

    @property
    def label_name(self) -> str:
        return self.name or self.kind


class ReaskSettings(BaseModel):
    """Re-ask variants of the private probe at chosen checkpoints, on a sample of the items."""

    model_config = ConfigDict(extra="forbid")
    checkpoints: list[int] = Field(
        default_factory=lambda: [1, 4, 8, 16],
        description="Checkpoints (after round r) at which the variants are asked.",
    )
    items: int | None = Field(
        0,
        ge=0,
        description="Items per dataset that get re-asks, drawn with the experiment seed "
        "(null: every item; 0: none).",
    )
    anonymous_name: str = Field(
        "Participant X",
        min_length=1,
        description="Name under which the agent's own messages appear in the anonymous variant.",
    )

    @model_validator(mode="after")
    def _positive_checkpoints(self) -> ReaskSettings:
        if any(c < 1 for c in self.checkpoints):
            raise ValueError("re-ask checkpoints are rounds, starting at 1")
        return self


class PeerPressureSettings(BaseModel):
    """N agents discuss a factual question; the first k push a false answer."""

    model_config = ConfigDict(extra="forbid")
    model: str = Field(
        "local/smollm2", description="Model of every agent, unless a `model` factor sets it."
    )
    datasets: list[DatasetSource] = Field(
        default_factory=lambda: [DatasetSource(name="counterfact", limit=5)],
        min_length=1,
        description="The datasets; a `dataset` factor runs each cell on one of them (by name). "
        "A plain string names a shipped subset.",
    )
    dataset: str | None = Field(
        None,
        description="Run the cell on one of `datasets` (by name); null: on all of them. Usually a "
        "factor.",
    )
    n_agents: int = Field(10, ge=2, le=10, description="Agents N (Alice, Bob, ... in order).")
    k: int = Field(1, ge=0, description="Adversaries k: the first k agents.")
    rounds: int = Field(16, ge=1, description="Rounds T; every agent speaks once per round.")
    memory_rounds: int = Field(5, ge=1, description="Memory window H in rounds.")
    order: OrderPolicy = Field(
        "shuffled", description="Speaking order: shuffled per round (same in every conversation)."
    )
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature of turns.")
    probe_temperature: float = Field(0.0, ge=0, le=2, description="Temperature of probes.")
    max_tokens: int = Field(96, ge=1, description="Maximum tokens of one public message.")
    probe_max_tokens: int = Field(32, ge=1, description="Maximum tokens of one private answer.")
    judge: JudgeSettings | None = Field(
        default_factory=JudgeSettings,
        description="The inline judge (null: label later with `backchannel judge`).",
    )
    reask: ReaskSettings = Field(default_factory=ReaskSettings)

    @model_validator(mode="before")
    @classmethod
    def _dataset_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("datasets"), list):
            data = dict(data)
            data["datasets"] = [
                {"name": entry} if isinstance(entry, str) else entry for entry in data["datasets"]
            ]
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PeerPressureSettings:
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"dataset names must be distinct: {names}")
        if self.k >= self.n_agents:
            raise ValueError(f"k = {self.k} leaves no honest agent among {self.n_agents}")
        return self
