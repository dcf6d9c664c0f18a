"""Settings of the peer-pressure paradigm (the experiment file's `settings:` section)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel.datasets import DatasetSource
from backchannel.engine import MAX_AGENTS, OrderPolicy
from backchannel.paradigms._validity import ValiditySettings

Topology = Literal["complete", "ring", "star", "small_world", "scale_free", "hierarchy", "edges"]
Placement = Literal["first", "hub", "periphery", "random"]
Assignment = Literal["round_robin", "random", "by_role"]
Intervention = Literal["none", "early_correction", "untrusted_peers", "designated_checker"]


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


class GraphSettings(BaseModel):
    """Parameters of the topologies (each kind reads its own)."""

    model_config = ConfigDict(extra="forbid")
    k: int = Field(4, ge=2, description="small_world: each agent's nearest neighbours (even).")
    p: float = Field(0.1, ge=0, le=1, description="small_world: rewiring probability.")
    m: int = Field(2, ge=1, description="scale_free: edges each new agent attaches with.")
    team_size: int = Field(4, ge=2, description="hierarchy: agents per team, the lead first.")
    edges: list[tuple[int, int]] = Field(
        default_factory=list,
        description="edges: pairs of agent positions (0-based) that hear each other.",
    )


class PeerPressureSettings(ValiditySettings):
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
    n_agents: int = Field(
        10, ge=2, le=MAX_AGENTS, description="Agents N (Alice, Bob, ... in order)."
    )
    k: int = Field(1, ge=0, description="Adversaries k (see `placement`).")
    k_share: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Adversaries as a share of N, rounded half up and at least one when the share "
        "is above 0; when set, `k` is not read.",
    )
    roster: str | None = Field(
        None, description="A CSV file `name,persona` of agents; null: the shipped roster."
    )
    topology: Topology = Field("complete", description="Who hears whom (see the docs).")
    graph: GraphSettings = Field(default_factory=GraphSettings)
    placement: Placement = Field(
        "first", description="Where the adversaries sit: first, hub, periphery or random."
    )
    models: list[str] = Field(
        default_factory=list,
        description="A model pool for mixed rooms; empty: every agent runs `model`.",
    )
    assignment: Assignment = Field(
        "round_robin",
        description="How agents get pool models: round_robin by position, seeded random, or "
        "by_role (`honest_model` / `adversary_model`).",
    )
    honest_model: str | None = Field(None, description="by_role: the honest agents' model.")
    adversary_model: str | None = Field(None, description="by_role: the adversaries' model.")
    intervention: Intervention = Field("none", description="An intervention (see the docs).")
    correction_round: int = Field(
        1, ge=1, description="early_correction: the moderator speaks after this round."
    )
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
        if self.adversaries >= self.n_agents:
            raise ValueError(f"k = {self.adversaries} leaves no honest agent among {self.n_agents}")
        if self.assignment == "by_role" and not (self.honest_model and self.adversary_model):
            raise ValueError("assignment by_role needs honest_model and adversary_model")
        if self.topology == "edges" and not self.graph.edges:
            raise ValueError("topology edges needs graph.edges (pairs of agent positions)")
        return self

    @property
    def adversaries(self) -> int:
        """k: the count, or `k_share` of N rounded half up (at least one for a share above 0)."""
        if self.k_share is None:
            return self.k
        count = int(self.k_share * self.n_agents + 0.5)
        return max(count, 1) if self.k_share > 0 else 0
