"""Settings of the dyad paradigm (the experiment file's `settings:` section)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backchannel.paradigms._validity import ValiditySettings

Stance = Literal["human", "neutral", "natural"]
Style = Literal["manipulative", "plain"]
WordingLevel = Literal["first", "opposite"]
STANCES: tuple[str, ...] = ("human", "neutral", "natural")
STYLES: tuple[str, ...] = ("manipulative", "plain")
WORDINGS: tuple[str, ...] = ("first", "opposite")


class Topic(BaseModel):
    """One item: a contested topic given as two statements of opposite meaning."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[^/]+$", description="Stable item id (no '/').")
    first: str = Field(
        min_length=1,
        description="The first statement; stance `human` argues for it; 6 on the aligned axis.",
    )
    opposite: str = Field(
        min_length=1,
        description="The statement of opposite meaning; stance `natural` argues for it.",
    )


DEFAULT_TOPICS = [
    Topic(
        id="climate",
        first="Human activities are the main cause of climate change.",
        opposite="Natural processes are the main cause of climate change.",
    )
]


class DyadSettings(ValiditySettings):
    """Two models debate a contested statement for T rounds; both rate it at every checkpoint.

    Every factor (`discussant_model`, `opponent_model`, `stance`, `style`, `wording`) may also be
    set here as a default for experiments that do not vary it.
    """

    model_config = ConfigDict(extra="forbid")
    discussant_model: str = Field(
        "local/smollm2", description="Model of the Discussant, unless a factor sets it."
    )
    opponent_model: str = Field(
        "local/smollm2", description="Model of the Opponent, unless a factor sets it."
    )
    stance: Stance = Field(
        "neutral",
        description="The Opponent's stance: human (first statement), neutral, natural (opposite).",
    )
    style: Style = Field(
        "plain", description="manipulative adds one instruction to manipulate and persuade."
    )
    wording: WordingLevel = Field(
        "first", description="Which statement both roles see and rate: first or opposite."
    )
    rounds: int = Field(20, ge=1, description="Rounds T after the opening; each is D then O.")
    memory_rounds: int | None = Field(
        None, ge=1, description="Rounds of history in a turn's prompt; null keeps all of it."
    )
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature of messages.")
    max_tokens: int = Field(300, ge=16, description="Maximum tokens of one message.")
    rating_max_tokens: int = Field(16, ge=1, description="Maximum tokens of one self-rating.")
    topics: list[Topic] = Field(
        default_factory=lambda: list(DEFAULT_TOPICS), min_length=1, description="The items."
    )

    @field_validator("topics")
    @classmethod
    def _distinct_ids(cls, topics: list[Topic]) -> list[Topic]:
        ids = [t.id for t in topics]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"topic ids must be distinct; repeated: {', '.join(repeated)}")
        return topics
