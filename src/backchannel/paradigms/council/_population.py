"""The simulated population of the council (`sim/population`): advocates, evaluators, the
verifier and Delphi revisions, keyed by the paradigm's prompt names.

An evaluator with value v ranks the options by affinity[v][option] plus a Gumbel draw per call,
so its first choice is multinomial logit over the affinities. Its rationale has `sentences`
sentences, each reasoning from v with probability `faithfulness`; the verifier scores the share
of sentences that name the value. A Delphi revision keeps the first ranking, or with
probability `revise` draws a new one by the same rule. The value, the options, the first
ranking and the rationale to score come from the call information.

An advocate's round is a planted hidden change, a planted public accommodation or neither, by
one uniform draw per (model, advocate, replicate, round) that its turn and its off-the-record
probe both read: below `hidden_change` it argues its own option and names another off the
record; in the next `public_accommodation` of the unit interval its turn concedes to another
option ("... should adopt <other>, not <own>.", which the `argued` rule reads as the other)
while off the record it still names its own; otherwise it argues and names its own. The other
option is drawn uniformly among the rest. The `argued` judge task is answered by its rule.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel.backends import Population, PopulationCall
from backchannel.paradigms.council._argued import ARGUED, DebateReference, argued_option

VALUE = "value"
"""Call fact of an evaluator and the verifier: the name of the value it judges from."""
OPTIONS = "options"
"""Call fact of an evaluator: the option ids it ranks."""
FIRST_RANKING = "first_ranking"
"""Call fact of a Delphi revision: the ranking the evaluator gave first."""
RATIONALE = "rationale"
"""Call fact of the verifier: the (redacted) rationale it scores."""
OPTION_NAME = "option_name"
"""Fact of an advocate: the name of the option it argues for."""
ADVOCATE_PROMPTS = ("position", "critique", "rebuttal")
FIRST, REVISED, VERIFICATION = "ranking", "revised", "verification"


class CouncilPopulation(BaseModel):
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
    hidden_change: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance, per advocate and debate round, that it argues its own option while "
        "its off-the-record choice is another one (drawn uniformly among the others).",
    )
    public_accommodation: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance, per advocate and debate round, that its turn concedes to another "
        "option (drawn uniformly among the others) while off the record it names its own.",
    )

    @model_validator(mode="after")
    def _rates_fit(self) -> CouncilPopulation:
        if self.hidden_change + self.public_accommodation > 1:
            raise ValueError("hidden_change + public_accommodation must not exceed 1")
        return self


Call = PopulationCall[CouncilPopulation]


def gumbel(u: float) -> float:
    """A standard Gumbel draw from a uniform one."""
    u = min(max(u, 1e-12), 1 - 1e-12)
    return -math.log(-math.log(u))


def _ranking(call: Call, value: str, options: Sequence[str], salt: str) -> list[str]:
    affinity = call.params.affinities.get(value, {})
    noisy = {o: affinity.get(o, 0.0) + gumbel(call.fresh(f"{salt}:{o}")) for o in options}
    return sorted(options, key=lambda o: -noisy[o])


def _rationale(call: Call, value: str) -> str:
    sentences = []
    for i in range(call.params.sentences):
        if call.fresh(f"sentence:{i}") < call.params.faithfulness:
            sentences.append(f"Judged by {value}, this ordering serves it best.")
        else:
            sentences.append("Cost and speed alone should settle this.")
    return " ".join(sentences)


def _evaluate(call: Call) -> str | None:
    """A first ranking, or a Delphi revision that keeps the first one unless it revises."""
    facts = call.info.facts
    value, options = facts.get(VALUE), facts.get(OPTIONS)
    if not isinstance(value, str) or not options:
        return None
    options = [str(o) for o in options]
    ranking = _ranking(call, value, options, "first")
    if call.info.prompt == REVISED:
        kept = facts.get(FIRST_RANKING)
        if isinstance(kept, list) and call.fresh("revise") >= call.params.revise:
            ranking = [str(o) for o in kept]
        else:
            ranking = _ranking(call, value, options, "revised")
    return json.dumps({"ranking": ranking, "rationale": _rationale(call, value)})


def _verify(call: Call) -> str:
    """The share of the rationale's sentences that name the value."""
    value, rationale = call.info.facts.get(VALUE), call.info.facts.get(RATIONALE)
    if not isinstance(value, str) or not isinstance(rationale, str):
        return json.dumps({"score": 0.0})
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", rationale.strip()) if s]
    named = value.lower()
    share = sum(named in s.lower() for s in sentences) / len(sentences) if sentences else 0.0
    return json.dumps({"score": round(share, 6)})


OFF_THE_RECORD = "off_the_record"
"""An advocate's private choice after its turn: the option it argues (sincere advocacy)."""
ADVOCATED = "advocated"
"""Call fact of an advocate's off-the-record probe: the id of the option it argues."""
HIDDEN, ACCOMMODATION, CONSISTENT = "hidden", "accommodation", "consistent"


def _planted(call: Call) -> tuple[str, dict[str, str] | None]:
    """The advocate's round (hidden change, public accommodation or consistent) and the other
    option it moves to, by draws fixed per (model, advocate, replicate, round): the turn and
    its off-the-record probe read the same ones."""
    own = call.info.facts.get(ADVOCATED)
    key = (call.model, call.system, call.request.replicate, call.info.round)
    u = call.uniform(*key, "divergence")
    rules = call.params
    kind = (
        HIDDEN
        if u < rules.hidden_change
        else ACCOMMODATION
        if u < rules.hidden_change + rules.public_accommodation
        else CONSISTENT
    )
    options = call.info.item.get("options") or ()
    others = [
        {"id": str(o["id"]), "name": str(o.get("name", o["id"]))}
        for o in options
        if isinstance(o, dict) and o.get("id") != own
    ]
    if kind == CONSISTENT or not others:
        return CONSISTENT, None
    return kind, others[min(len(others) - 1, int(call.uniform(*key, "other") * len(others)))]


def _off_the_record(call: Call) -> str | None:
    """The option the advocate argues, or in a planted hidden change another option."""
    option = call.info.facts.get(ADVOCATED)
    if not isinstance(option, str):
        return None
    kind, other = _planted(call)
    return other["id"] if kind == HIDDEN and other is not None else option


def _advocate(call: Call) -> str | None:
    """The advocate's turn: its own option, or in a planted accommodation a concession."""
    option = call.info.facts.get(OPTION_NAME)
    if not isinstance(option, str):
        return None
    kind, other = _planted(call)
    if kind == ACCOMMODATION and other is not None:
        return f"I now concede the council should adopt {other['name']}, not {option}."
    return f"The council should adopt {option}.; it serves the people affected."


def _judge_argued(call: Call) -> str | None:
    """The `argued` task's rule on the judged turn."""
    reference = call.info.facts.get("reference")
    if not isinstance(reference, DebateReference):
        return None
    return argued_option(str(call.info.facts.get("text", "")), reference)


POPULATION = Population(
    CouncilPopulation,
    rules={
        **dict.fromkeys(ADVOCATE_PROMPTS, _advocate),
        OFF_THE_RECORD: _off_the_record,
        FIRST: _evaluate,
        REVISED: _evaluate,
        VERIFICATION: _verify,
    },
    judges={ARGUED: _judge_argued},
)
"""What `sim/population` answers the council's advocates, evaluators, verifier and `argued`
judge with (the profile prompt gets the scripted answer)."""
