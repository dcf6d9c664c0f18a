"""Applying a judge: the rule and model judges, collecting a stored run's targets, sampling.

The same pieces serve inline judging (beside a running conversation) and labelling a stored run
afterwards (`backchannel judge`), so both see the same prompts and the same context.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.backends import LLMClient, UsageMeter
from backchannel.engine import MODERATOR
from backchannel.judges._llm import LLMJudge
from backchannel.judges._target import ContextTurn, JudgeTask, Target, Verdict

if TYPE_CHECKING:
    from backchannel.engine import ConversationContext, Event

CONTEXT_TURNS = 5
"""Public messages before a target that a judge sees, inline and afterwards alike."""
RULE_MODEL = "rule"


class Judge(Protocol):
    """Labels one target; `model` is stored with every label."""

    @property
    def model(self) -> str: ...

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class RuleJudge:
    """The rule judge behind the Judge interface: applies the task's rule, calls no model."""

    model: str = RULE_MODEL

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict:
        rule = target.task.rule
        if rule is None:
            raise ValueError(f"the rule judge has no rule for {target.task.name!r} targets")
        label = rule(target)
        return Verdict(label, "ok", label, self.model)


def make_judge(model: str, *, max_tokens: int = 16) -> Judge:
    """`rule` is the rule judge; any `provider/model` string is an LLM judge."""
    if model == RULE_MODEL:
        return RuleJudge()
    return LLMJudge(model, max_tokens=max_tokens)


def rule_gaps(tasks: Sequence[JudgeTask]) -> list[str]:
    """The names of the tasks the rule judge cannot label (no rule)."""
    return [task.name for task in tasks if task.rule is None]


async def judge_target(
    judge: Judge, client: LLMClient, target: Target, meter: UsageMeter | None = None
) -> Verdict:
    """The judge's verdict on one target (inline and afterwards alike)."""
    return await judge.judge(client, target, meter)


async def judge_event(
    ctx: ConversationContext,
    judge: Judge,
    event: Event,
    name: str,
    task: JudgeTask,
    reference: Any,
    context: tuple[ContextTurn, ...] = (),
) -> None:
    """Judge one event of a running conversation (beside it) and store the verdict as label
    `name`; a failed verdict is stored with its status and text, never a default."""
    spec = ctx.spec
    target = Target(
        conversation_id=spec.conversation_id,
        event_seq=event.seq,
        task=task,
        channel=event.channel,
        speaker=event.agent,
        text=event.text,
        reference=reference,
        conversation_seed=spec.seed,
        context=context,
    )
    verdict = await judge_target(judge, ctx.client, target, ctx.usage)
    ctx.label(
        event, name, verdict.label, status=verdict.status, text=verdict.text, model=verdict.model
    )


def speaker_name(agent: str) -> str:
    """How an event's agent is named to a judge: the room's opening speaks as the Moderator."""
    return MODERATOR if agent == "moderator" else agent


@dataclass(frozen=True, slots=True)
class Pick:
    """What a paradigm judges in one event: the task, the judged text and the reference."""

    task: JudgeTask
    text: str
    reference: Any


Chooser = Callable[[Mapping[Any, Any], Mapping[str, Any]], Pick | None]
"""(event row with decoded value and meta, decoded conversation meta) -> Pick or None."""


def collect_targets(
    tables: RunTables,
    choose: Chooser,
    *,
    context_turns: int = CONTEXT_TURNS,
    shown: Callable[[Mapping[Any, Any]], str] | None = None,
) -> list[Target]:
    """The targets `choose` picks among the events of finished conversations, in stored order.

    A task with context sees the `context_turns` public messages before its target (messages
    that are ok or have text), each as `shown(event)` says (default: its text).
    """
    if context_turns < 0:
        raise ValueError("context_turns must be non-negative")
    show = shown or (lambda event: str(event["text"] or ""))
    events = tables.events_of()
    by_conversation = dict(tuple(events.groupby("conversation_id", sort=False)))
    found: list[Target] = []
    for conversation in tables.done_conversations().to_dict(orient="records"):
        conversation_id, seed = str(conversation["conversation_id"]), int(conversation["seed"])
        group = by_conversation.get(conversation_id)
        if group is None:
            continue
        public: list[ContextTurn] = []
        for event in group.sort_values("seq").to_dict(orient="records"):
            pick = choose(event, conversation["meta"])
            if pick is not None:
                shows = pick.task.context and context_turns > 0
                context = tuple(public[-context_turns:]) if shows else ()
                found.append(
                    Target(
                        conversation_id=conversation_id,
                        event_seq=int(event["seq"]),
                        task=pick.task,
                        channel=event["channel"],
                        speaker=speaker_name(str(event["agent"])),
                        text=pick.text,
                        reference=pick.reference,
                        conversation_seed=seed,
                        context=context,
                    )
                )
            is_message = event["kind"] == "message" and event["channel"] == "public"
            if is_message and (event["status"] == "ok" or event["text"]):
                public.append(ContextTurn(speaker_name(str(event["agent"])), show(event)))
    return found


def sample_targets(found: Sequence[Target], sample: int | None, seed: int = 0) -> list[Target]:
    """`sample` targets drawn at random (seeded), kept in stored order; all when None."""
    if sample is not None and sample < 1:
        raise ValueError("sample must be at least 1")
    if sample is None or sample >= len(found):
        return list(found)
    chosen = sorted(random.Random(seed).sample(range(len(found)), sample))
    return [found[i] for i in chosen]


LabelRow = tuple[str, int, str | None, str, str, str]


async def judge_targets(
    judge: Judge, client: LLMClient, chosen: Sequence[Target]
) -> list[LabelRow]:
    """Judge every target concurrently; rows (conversation_id, event_seq, label, status, text,
    model) for `RunStore.add_labels`."""
    verdicts = await asyncio.gather(*(judge_target(judge, client, t) for t in chosen))
    return [
        (t.conversation_id, t.event_seq, v.label, v.status, v.text, v.model)
        for t, v in zip(chosen, verdicts, strict=True)
    ]


def label_counts(rows: Sequence[LabelRow]) -> pd.DataFrame:
    """Labels and failures per status, for a command's summary."""
    frame = pd.DataFrame(
        rows, columns=["conversation_id", "event_seq", "label", "status", "t", "m"]
    )
    counts = frame.fillna({"label": "(none)"}).groupby(["status", "label"]).size()
    return counts.rename("count").reset_index()


@dataclass(frozen=True)
class Judging:
    """What a paradigm offers judges: its tasks, and how a run's events become targets.

    `chooser(tables)` builds, once per run, the function that picks an event's task, judged
    text and reference; `shown` renders an earlier public message as context (default: text).
    """

    tasks: tuple[JudgeTask, ...]
    chooser: Callable[[RunTables], Chooser]
    shown: Callable[[Mapping[Any, Any]], str] | None = None

    def __post_init__(self) -> None:
        names = [task.name for task in self.tasks]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"judging needs tasks with distinct names, got {names}")

    def targets(
        self,
        tables: RunTables,
        kinds: Collection[str] | None = None,
        *,
        context_turns: int = CONTEXT_TURNS,
    ) -> list[Target]:
        """The run's targets of the named tasks (None: every task), in stored order."""
        wanted = {task.name for task in self.tasks} if kinds is None else set(kinds)
        if not wanted & {task.name for task in self.tasks}:
            return []
        choose = self.chooser(tables)

        def chosen(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
            pick = choose(event, meta)
            return pick if pick is not None and pick.task.name in wanted else None

        return collect_targets(tables, chosen, context_turns=context_turns, shown=self.shown)
