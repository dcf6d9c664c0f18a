"""Settings of the discussion paradigm (the experiment file's `settings:` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from backchannel.engine import OrderPolicy


class Question(BaseModel):
    """One item: an id and a question."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[^/]+$", description="Stable item id (no '/').")
    question: str = Field(min_length=1, description="The question the group discusses.")


DEFAULT_QUESTIONS = [
    Question(id="capital-australia", question="What is the capital city of Australia?"),
    Question(id="largest-planet", question="Which planet is the largest in the Solar System?"),
    Question(
        id="water-boiling", question="At what temperature in Celsius does water boil at sea level?"
    ),
]


class DiscussionSettings(BaseModel):
    """N persona agents discuss a question for T rounds; everyone is probed at every checkpoint."""

    model_config = ConfigDict(extra="forbid")
    model: str = Field(
        "local/smollm2", description="Model of every agent, unless a `model` factor sets it."
    )
    agents: int = Field(3, ge=1, le=10, description="Number of agents (Alice, Bob, ... in order).")
    rounds: int = Field(2, ge=1, description="Rounds T; every agent speaks once per round.")
    memory_rounds: int = Field(5, ge=1, description="Memory window H in rounds.")
    order: OrderPolicy = Field(
        "shuffled", description="Speaking order: fixed or shuffled per round."
    )
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature of turns.")
    max_tokens: int = Field(96, ge=1, description="Maximum tokens of one public message.")
    probe_max_tokens: int = Field(32, ge=1, description="Maximum tokens of one private answer.")
    questions: list[Question] = Field(
        default_factory=lambda: list(DEFAULT_QUESTIONS), min_length=1, description="The items."
    )
