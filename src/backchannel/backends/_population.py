"""`sim/population`: a simulated population whose behaviour follows documented stochastic rules
with planted parameters, so every metric can be checked against a known answer.

The rules are keyed on what each paradigm's prompts ask (see docs/population.md); a prompt no
rule recognises gets the built-in scripted answer. Parameters come from the experiment file's
`population:` section; `models:` overrides them per simulated model (`sim/population#<label>`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backchannel.backends._sim import scripted_answer
from backchannel.backends._types import RawCompletion, Request

POPULATION = "population"


class PeerPressureRules(BaseModel):
    """Peer pressure: knowing, adopting the false answer, and saying it (or not) in public."""

    model_config = ConfigDict(extra="forbid")

    know: float = Field(0.9, ge=0, le=1, description="Chance an honest agent knows the answer.")
    adopt: float = Field(
        0.2,
        ge=0,
        le=1,
        description="Chance that one adversary message seen converts an honest agent: after "
        "exposure e it believes the false answer with probability 1 - (1 - adopt)^e.",
    )
    peer_weight: float = Field(
        0.5, ge=0, description="Exposure one honest agent's endorsement counts for (adversary: 1)."
    )
    endorse: float = Field(
        0.5, ge=0, le=1, description="Chance an infected agent says the false answer in public."
    )
    hedge: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Of the infected turns that do not endorse, the share that hedge (the rest "
        "change the subject: hidden infection either way).",
    )
    reject: float = Field(
        0.6, ge=0, le=1, description="Chance an exposed knower rejects the false answer in public."
    )
    performative: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Chance an exposed knower endorses the false answer it does not believe.",
    )


class DyadRules(BaseModel):
    """Dyad: positions on the shown statement that move towards the other's position."""

    model_config = ConfigDict(extra="forbid")

    discussant_rate: float = Field(
        0.15, ge=0, le=1, description="Share of the gap the Discussant closes after each message."
    )
    opponent_rate: float = Field(
        0.05, ge=0, le=1, description="Share of the gap the Opponent closes after each message."
    )
    manipulation_gain: float = Field(
        1.5, ge=0, description="Factor on the Discussant's rate when the Opponent manipulates."
    )
    discussant_start: float = Field(
        3.0, ge=0, le=6, description="The Discussant's starting agreement with the statement."
    )
    stance_strength: float = Field(
        2.5, ge=0, le=3, description="How far from 3 an Opponent with a stance starts."
    )
    start_spread: float = Field(
        0.5, ge=0, le=3, description="Half-width of the uniform noise on starting positions."
    )
    accept_step: float = Field(
        0.2, gt=0, description="A move towards the other of at least this much is an ACCEPT."
    )
    reject_gap: float = Field(
        1.0, ge=0, description="A smaller move at a gap of at least this much is a REJECT."
    )


class CouncilRules(BaseModel):
    """Council: first choices from value-option affinities; rationales faithful at a set rate."""

    model_config = ConfigDict(extra="forbid")

    affinities: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="value -> option id -> affinity; rankings sort affinity plus Gumbel noise, "
        "so the first choice is multinomial logit (unnamed pairs: 0).",
    )
    faithfulness: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Chance each rationale sentence reasons from the evaluator's value; the "
        "verifier scores the share of sentences that do.",
    )
    sentences: int = Field(5, ge=1, le=20, description="Sentences per rationale.")
    revise: float = Field(
        0.2, ge=0, le=1, description="Chance a Delphi revision draws a new ranking."
    )


class TestimonyRules(BaseModel):
    """Testimony: votes by a weighted count of the end places the accounts an agent holds claim."""

    model_config = ConfigDict(extra="forbid")

    observation: float = Field(
        1.5,
        ge=0,
        le=10,
        description="Weight of the agent's own first-hand end place (each believed account of "
        "another role counts 1).",
    )
    trust: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Chance an agent believes another role's account, fixed per (agent, source): "
        "a believed account counts towards its vote and is cited; a doubted one is ignored.",
    )
    strategy: Literal["count", "reconstruct"] = Field(
        "count",
        description="count: vote the weighted plurality of the end places the accounts claim; "
        "reconstruct: rebuild the walks the believed accounts allow (the verifier's "
        "enumeration), vote their endpoint when it is unique (else count), and pass every "
        "believed account on word for word.",
    )


class PopulationRules(BaseModel):
    """One simulated model's rules for every paradigm."""

    model_config = ConfigDict(extra="forbid")

    peer_pressure: PeerPressureRules = Field(default_factory=PeerPressureRules)
    dyad: DyadRules = Field(default_factory=DyadRules)
    council: CouncilRules = Field(default_factory=CouncilRules)
    testimony: TestimonyRules = Field(default_factory=TestimonyRules)


class PopulationParams(PopulationRules):
    """The `population:` section: rules for every simulated model, and overrides per model.

    `models` maps a label (the part after `#` in `sim/population#<label>`, or the whole model
    string) to rules that override the shared ones field by field.
    """

    models: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)

    def for_model(self, model: str) -> PopulationRules:
        """The rules of one simulated model: the shared ones with its overrides on top."""
        label = model.partition("#")[2]
        override = self.models.get(model) or self.models.get(label) or {}
        base = self.model_dump(exclude={"models"})
        for paradigm, fields in override.items():
            base.setdefault(paradigm, {}).update(fields)
        return PopulationRules.model_validate(base)

    def identity(self) -> str:
        """A stable text of the parameters: part of the response cache key."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def check(self) -> None:
        """Raise ValueError naming a per-model override that does not fit the rules."""
        for label in self.models:
            try:
                self.for_model("#" + label)
            except ValueError as error:
                first = str(error).splitlines()
                detail = first[1] if len(first) > 1 else first[0]
                raise ValueError(f"population.models.{label}: {detail}") from None


Rule = Callable[[Request, PopulationRules], "str | None"]


def _rules() -> tuple[Rule, ...]:
    from backchannel.backends._pop_council import council_answer
    from backchannel.backends._pop_dyad import dyad_answer
    from backchannel.backends._pop_peer import peer_pressure_answer
    from backchannel.backends._pop_testimony import testimony_answer

    return (peer_pressure_answer, dyad_answer, council_answer, testimony_answer)


def population_answer(request: Request, params: PopulationParams) -> str:
    """The first rule that recognises the request answers it; else the scripted answer."""
    rules = params.for_model(request.model)
    for rule in _rules():
        answer = rule(request, rules)
        if answer is not None:
            return answer
    return scripted_answer(request)


class PopulationBackend:
    """The `sim/population` provider: instant, deterministic, parameters from the experiment."""

    def __init__(self, params: PopulationParams | None = None) -> None:
        self._params = params or PopulationParams()
        self._params.check()

    @property
    def endpoint(self) -> str:
        return f"sim/{POPULATION}"

    async def generate(self, request: Request) -> RawCompletion:
        text = population_answer(request, self._params)
        prompt_tokens = sum(max(1, len(m.content) // 4) for m in request.messages)
        return RawCompletion(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=max(1, len(text) // 4)
        )

    async def aclose(self) -> None:
        return None
