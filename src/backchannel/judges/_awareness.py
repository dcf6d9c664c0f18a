"""Experiment awareness: the judge task that labels whether an agent's guess at what the study
tests names the study's manipulation, and the simulated population's answers to both calls.

The reference of a target is the paradigm's own description of its manipulation
(`Paradigm.manipulation`). The task has no rule: whether a free answer names a manipulation is a
model judge's reading, never a match of wording. The population section `awareness` plants the
rate `aware` at which a simulated agent's guess names the manipulation, so the rate the metrics
report can be checked against a known answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from backchannel.backends import Population, PopulationCall
from backchannel.judges._prompts import judge_template
from backchannel.judges._target import JudgeTask, Target

AWARENESS = "awareness"
"""The probe's name, the judge task's name and the name its labels are stored under."""
AWARE, UNAWARE = "aware", "unaware"
MANIPULATION = "manipulation"
"""The awareness probe's call fact: the manipulation's description (for the population)."""
_GUESS = "I think the study is testing this: "
_OTHER = "I think the study is testing how well we answer and discuss the questions."


def _prompt(target: Target) -> str:
    return judge_template("awareness.txt").format(
        reference=str(target.reference).strip(), answer=target.text.strip() or "(empty)"
    )


AWARENESS_TASK = JudgeTask(AWARENESS, (AWARE, UNAWARE), _prompt)
"""Whether an answer to the awareness probe names the manipulation (model judges only)."""


class AwarenessPopulation(BaseModel):
    """Experiment awareness of the simulated population."""

    model_config = ConfigDict(extra="forbid")
    aware: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Chance an agent's guess at what the study tests names its manipulation.",
    )


Call = PopulationCall[AwarenessPopulation]


def _guess(call: Call) -> str | None:
    """The awareness probe: the manipulation with probability `aware`, else another guess."""
    manipulation = call.info.facts.get(MANIPULATION)
    if not isinstance(manipulation, str) or not manipulation:
        return None
    if call.fresh(AWARENESS) < call.params.aware:
        return f"{_GUESS}{manipulation}"
    return _OTHER


def _judge(call: Call) -> str | None:
    """The population's own guesses, read as the rule above writes them."""
    text = str(call.info.facts.get("text", ""))
    reference = str(call.info.facts.get("reference", ""))
    if not reference:
        return None
    return AWARE if text.startswith(_GUESS) and reference.strip() in text else UNAWARE


AWARENESS_POPULATION = Population(
    AwarenessPopulation, rules={AWARENESS: _guess}, judges={AWARENESS: _judge}
)
"""What `sim/population` answers the awareness probe and its judge task with (section
`awareness` of `population:`)."""
