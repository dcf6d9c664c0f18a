"""What kind of judging a target asks for (a task: label set, model prompt, optional rule), what a
judge is given (one target: an event's text with its task, reference and context) and what it
returns.

Paradigms define their tasks (the factual-question tasks are two of them); the rule judge and the
LLM judge apply whichever task a target names, so `judge` and `agree` work for every paradigm.
A task and its targets refer to each other, so they live together here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from backchannel.engine import Channel
from backchannel.seeding import derive_seed

VERDICT_STATUSES = ("ok", "parse_failure", "error", "refusal", "truncated")
CHANNELS: tuple[str, ...] = get_args(Channel)


@dataclass(frozen=True, slots=True)
class JudgeTask:
    """One kind of judging, named as `backchannel judge --kind` and `agree` name it.

    `prompt` renders the user message a model judge is asked; `rule` labels without a model
    (None: only model judges can label this task); `context` says whether the judge sees the
    public messages before the target.
    """

    name: str
    labels: tuple[str, ...]
    prompt: Callable[[Target], str]
    rule: Callable[[Target], str] | None = None
    context: bool = False

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"a judge task name is letters, digits and _, not {self.name!r}")
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError(f"task {self.name!r}: give at least two distinct labels")


@dataclass(frozen=True, slots=True)
class ContextTurn:
    """One earlier public message shown to a judge: who said what."""

    speaker: str
    text: str

    def render(self) -> str:
        return f"{self.speaker}: {self.text.strip()}"


@dataclass(frozen=True, slots=True)
class Target:
    """One event to judge: its text, speaker and channel, the task that says how, the
    paradigm-defined `reference` the task reads (a FactItem, a statement, a value), and the
    public messages before it when the task shows context."""

    conversation_id: str
    event_seq: int
    task: JudgeTask
    channel: Channel
    speaker: str
    text: str
    reference: Any
    conversation_seed: int
    context: tuple[ContextTurn, ...] = ()

    def __post_init__(self) -> None:
        if self.channel not in CHANNELS:
            raise ValueError(f"unknown channel {self.channel!r}; expected one of {CHANNELS}")
        if self.event_seq < 0:
            raise ValueError("event_seq must be non-negative")

    @property
    def kind(self) -> str:
        """The task's name: what `--kind` selects and `agree` groups by."""
        return self.task.name

    @property
    def seed(self) -> int:
        """The seed of the judge call: the same inline and afterwards, so both share the
        response cache."""
        return judge_seed(self.conversation_seed, self.event_seq)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's label of one text; a failed verdict has no label and says why in `status`."""

    label: str | None
    status: str
    text: str
    model: str

    def __post_init__(self) -> None:
        if self.status not in VERDICT_STATUSES:
            raise ValueError(f"verdict status {self.status!r} is not one of {VERDICT_STATUSES}")
        if (self.status == "ok") != (self.label is not None):
            raise ValueError("a verdict has a label exactly when its status is ok")


def judge_seed(conversation_seed: int, event_seq: int) -> int:
    """The seed of the judge call on one event of a conversation."""
    return derive_seed(conversation_seed, "judge", event_seq)
