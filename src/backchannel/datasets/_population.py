"""What the simulated population (`sim/population`) knows of factual questions, and how it
answers the screening question.

A simulated model knows a question's answer with probability `know`, by a draw fixed per (model,
question): screening and every agent of that model that is asked the question agree. What there
is to know is the item's own true answer, which the screening call (and a paradigm's calls) carry
in their call information.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from backchannel.backends import Population, PopulationCall

KNOW = 0.9
"""The default chance that a simulated model knows a question's answer."""
SCREEN = "screen"
"""The screening question's name in its call information."""


def knows(model: str, question: str, know: float) -> bool:
    """Whether a simulated model knows a question's answer: fixed per (model, question)."""
    return PopulationCall.uniform(model, question.strip(), "know") < know


class Knowledge(BaseModel):
    """The screening question: a model answers the true answer when it knows it."""

    model_config = ConfigDict(extra="forbid")

    know: float = Field(
        KNOW, ge=0, le=1, description="Chance a simulated model knows a question's answer."
    )


def _screened(call: PopulationCall[Knowledge]) -> str:
    """The true answer when the model knows the item's question, else that it does not know."""
    question, truth = call.info.item.get("question"), call.info.item.get("true_answer")
    if isinstance(question, str) and truth and knows(call.model, question, call.params.know):
        return f"{truth}."
    return "I do not know."


SCREENING_POPULATION = Population(Knowledge, rules={SCREEN: _screened}, source="screening")
"""The datasets layer's population rules: the answer to the screening question."""
