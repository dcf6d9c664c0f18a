"""Applying a judge to stored events: which events are judged, with what item and context.

The same pieces serve inline judging (beside a running conversation) and labelling a stored run
afterwards (`backchannel judge`), so both see the same prompts and the same context.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.backends import LLMClient, UsageMeter
from backchannel.datasets import FactItem
from backchannel.judges._llm import LLMJudge
from backchannel.judges._rule import classify_private, classify_public
from backchannel.judges._target import ContextTurn, Target, Verdict

JudgeKind = Literal["private", "public", "all"]
CONTEXT_TURNS = 5
RULE_MODEL = "rule"
MODERATOR = "Moderator"
_FACT_FIELDS = tuple(f.name for f in dataclasses.fields(FactItem))


def fact_payload(item: FactItem) -> dict[str, Any]:
    """A FactItem as JSON-able fields (aliases as lists), for a conversation's item payload."""
    payload = dataclasses.asdict(item)
    for name in ("true_aliases", "false_aliases"):
        payload[name] = list(payload[name])
    return payload


def fact_item(payload: Mapping[str, Any]) -> FactItem:
    """The FactItem stored in a payload by `fact_payload` (extra keys are ignored)."""
    missing = [name for name in _FACT_FIELDS if name not in payload]
    if missing:
        raise ValueError(f"the item lacks {missing}; it was not stored by a factual paradigm")
    values = {name: payload[name] for name in _FACT_FIELDS}
    for name in ("true_aliases", "false_aliases"):
        values[name] = tuple(values[name])
    return FactItem(**values)


class Judge(Protocol):
    """Labels one target (a private answer or a public message); `model` is stored with every
    label."""

    @property
    def model(self) -> str: ...

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class RuleJudge:
    """The rule judge behind the Judge interface: calls no model, never fails."""

    model: str = RULE_MODEL

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict:
        label: str
        if target.channel == "private":
            label = classify_private(target.text, target.item)
        else:
            label = classify_public(target.text, target.item, [t.text for t in target.context])
        return Verdict(label, "ok", label, self.model)


def make_judge(model: str, *, max_tokens: int = 16) -> Judge:
    """`rule` is the rule judge; any `provider/model` string is an LLM judge."""
    if model == RULE_MODEL:
        return RuleJudge()
    return LLMJudge(model, max_tokens=max_tokens)


async def judge_target(
    judge: Judge, client: LLMClient, target: Target, meter: UsageMeter | None = None
) -> Verdict:
    """The judge's verdict on one target (inline and afterwards alike)."""
    return await judge.judge(client, target, meter)


def _speaker(agent: str) -> str:
    return MODERATOR if agent == "moderator" else agent


def targets(
    tables: RunTables,
    kind: JudgeKind = "all",
    *,
    sample: int | None = None,
    seed: int = 0,
    context_turns: int = CONTEXT_TURNS,
) -> list[Target]:
    """Honest agents' ok private answers and public turns of finished conversations.

    A public turn's context is the `context_turns` public messages before it. `sample` draws
    that many targets at random (seeded), kept in stored order.
    """
    if kind not in ("private", "public", "all"):
        raise ValueError(f"kind must be private, public or all, not {kind!r}")
    if sample is not None and sample < 1:
        raise ValueError("sample must be at least 1")
    conversations = tables.conversations
    done = conversations[conversations["status"] == "done"]
    found: list[Target] = []
    events = tables.events
    for row in done.to_dict(orient="records"):
        found.extend(_conversation_targets(row, events, kind, context_turns))
    if sample is not None and sample < len(found):
        chosen = sorted(random.Random(seed).sample(range(len(found)), sample))
        found = [found[i] for i in chosen]
    return found


def _conversation_targets(
    row: Mapping[Any, Any], events: pd.DataFrame, kind: JudgeKind, context_turns: int
) -> list[Target]:
    meta = json.loads(row["meta"]) if isinstance(row["meta"], str) else dict(row["meta"])
    item = fact_item(meta.get("item", {}))
    conversation_id, seed = str(row["conversation_id"]), int(row["seed"])
    group = events[events["conversation_id"] == conversation_id].sort_values("seq")
    found: list[Target] = []
    public: list[ContextTurn] = []
    for event in group.to_dict(orient="records"):
        is_message = event["kind"] == "message" and event["channel"] == "public"
        judged = event["role"] == "honest" and event["status"] == "ok"
        text, agent = str(event["text"] or ""), str(event["agent"])
        seq = int(event["seq"])
        if judged and event["kind"] == "probe" and kind in ("private", "all"):
            found.append(Target(conversation_id, seq, "private", agent, text, item, seed))
        elif judged and is_message and event["name"] == "turn" and kind != "private":
            context = tuple(public[-context_turns:]) if context_turns else ()
            found.append(Target(conversation_id, seq, "public", agent, text, item, seed, context))
        if is_message and (event["status"] == "ok" or text):
            public.append(ContextTurn(_speaker(agent), text))
    return found


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
