"""The validity settings every built-in paradigm shares (one name each, so each can be a factor)
and the awareness probe they ask the same way: a final private question, judged beside the
conversation by a model judge against the paradigm's description of its manipulation."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from pydantic import BaseModel, Field, model_validator

from backchannel.engine import Agent, ConversationContext, Event, Room
from backchannel.judges import (
    AWARENESS,
    AWARENESS_TASK,
    MANIPULATION,
    Judge,
    judge_event,
    make_judge,
)


class ValiditySettings(BaseModel):
    """Settings of the validity checks (docs/validity.md); a paradigm's settings inherit them."""

    off_the_record: bool = Field(
        False,
        description="After each public turn, ask the speaker privately what it really thinks "
        "(probe `off_the_record`); the answer is never shown to anyone.",
    )
    awareness_probe: bool = Field(
        False,
        description="After the conversation, ask each agent privately what it thinks the study "
        "is testing (probe `awareness`), labelled by `awareness_model`.",
    )
    awareness_model: str | None = Field(
        None, description="The model judge of the awareness answers (needed by awareness_probe)."
    )

    @model_validator(mode="after")
    def _awareness_judge(self) -> ValiditySettings:
        if self.awareness_probe and not self.awareness_model:
            raise ValueError(
                "awareness_probe needs awareness_model, the model that judges the answers"
            )
        return self

    def validity_models(self) -> set[str]:
        """The models the validity checks call beyond the paradigm's own."""
        return {self.awareness_model} if self.awareness_probe and self.awareness_model else set()


def add_calls(calls: dict[str, int], model: str, count: int) -> None:
    """Count `count` more calls of `model` (for a paradigm's `estimate`)."""
    if count:
        calls[model] = calls.get(model, 0) + count


def awareness_calls(settings: ValiditySettings, calls: dict[str, int], asked: Sequence[str]) -> int:
    """Add the awareness probe's calls (one per asked agent's model, and one judge call each);
    the number of calls added."""
    if not settings.awareness_probe or settings.awareness_model is None:
        return 0
    for model in asked:
        add_calls(calls, model, 1)
    add_calls(calls, settings.awareness_model, len(asked))
    return 2 * len(asked)


def ask_awareness(
    ctx: ConversationContext,
    room: Room,
    agents: Sequence[Agent],
    question: str,
    manipulation: str,
    settings: ValiditySettings,
) -> None:
    """Ask each of `agents` privately, from its whole record, what the study is testing, and
    label each answer beside the conversation (labels stored under `awareness`)."""
    if not settings.awareness_probe or settings.awareness_model is None:
        return
    tasks = room.checkpoint(
        question,
        agents=agents,
        name=AWARENESS,
        full_history=True,
        facts={MANIPULATION: manipulation},
    )
    for task in tasks:
        judge_awareness(ctx, task, manipulation, settings)


def judge_awareness(
    ctx: ConversationContext,
    answer: Event | Awaitable[Event],
    manipulation: str,
    settings: ValiditySettings,
) -> None:
    """Label one awareness answer beside the conversation once it arrives (for an awareness
    probe a paradigm asks outside a room, by `ctx.ask(..., name=AWARENESS)`: its event)."""
    if settings.awareness_model is None:
        raise ValueError("awareness_probe needs awareness_model")
    ctx.spawn(_label(ctx, make_judge(settings.awareness_model), answer, manipulation))


async def _label(
    ctx: ConversationContext, judge: Judge, answer: Event | Awaitable[Event], reference: str
) -> None:
    event = answer if isinstance(answer, Event) else await answer
    if event.status != "ok":
        return  # a failed probe is counted by the metrics, not judged
    await judge_event(ctx, judge, event, AWARENESS, AWARENESS_TASK, reference)
