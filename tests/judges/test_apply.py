"""Collecting targets with any paradigm's chooser, and what the rule judge can label."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pytest

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables
from backchannel.backends import build_client
from backchannel.judges import (
    Chooser,
    ContextTurn,
    JudgeTask,
    Judging,
    Pick,
    RuleJudge,
    collect_targets,
    rule_gaps,
    sample_targets,
)

LENGTH = JudgeTask(
    "length",
    ("short", "long"),
    prompt=lambda t: f"Is this short or long? {t.text}",
    rule=lambda t: "short" if len(t.text) < t.reference else "long",
    context=True,
)
FREE = JudgeTask("free", ("yes", "no"), prompt=lambda t: t.text)


def event(seq: int, kind: str, agent: str, text: str, value: Any = None,
          status: str = "ok", cid: str = "c1") -> dict[str, Any]:  # fmt: skip
    return {"run_id": "r", "conversation_id": cid, "seq": seq, "kind": kind, "name": "turn",
            "round": 1, "turn": seq, "agent": agent, "role": "x",
            "channel": "public" if kind == "message" else "private", "text": text,
            "value": json.dumps(value), "status": status, "model": "m", "prompt_tokens": 0,
            "completion_tokens": 0, "latency_s": 0.0, "cached": False,
            "meta": json.dumps({"n": seq})}  # fmt: skip


def conversation(cid: str, status: str) -> dict[str, Any]:
    return {"run_id": "r", "conversation_id": cid, "paradigm": "p", "cell_key": "", "cell": "{}",
            "item_id": "i", "replicate": 0, "seed": 9, "status": status, "error": None,
            "meta": json.dumps({"limit": 6})}  # fmt: skip


def tables() -> RunTables:
    events = [
        event(0, "message", "moderator", "Begin."),
        event(1, "message", "Ann", "Hello there", value=1),
        event(2, "message", "Bo", "", status="error"),  # failed, no text: not context
        event(3, "rating", "Ann", "4", value=4),
        event(4, "message", "Bo", "Hi", value=2),
        event(0, "message", "Ann", "Elsewhere", value=1, cid="c2"),
    ]
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame(
            [conversation("c1", "done"), conversation("c2", "failed")],
            columns=CONVERSATION_BASE_COLUMNS,
        ),
    )


def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
    """Ok messages with a value: decoded value and meta reach the chooser."""
    if event["kind"] != "message" or event["status"] != "ok" or event["value"] is None:
        return None
    assert isinstance(event["value"], int) and event["meta"] == {"n": event["seq"]}
    return Pick(LENGTH, event["text"], meta["limit"])


def test_targets_of_finished_conversations_with_their_context_in_stored_order() -> None:
    found = collect_targets(tables(), choose)
    assert [(t.event_seq, t.speaker, t.kind, t.reference, t.conversation_seed) for t in found] == [
        (1, "Ann", "length", 6, 9),
        (4, "Bo", "length", 6, 9),
    ]
    assert found[0].context == (ContextTurn("Moderator", "Begin."),)
    assert found[1].context == (
        ContextTurn("Moderator", "Begin."),
        ContextTurn("Ann", "Hello there"),
    )
    (_, last) = collect_targets(tables(), choose, context_turns=1)
    assert last.context == (ContextTurn("Ann", "Hello there"),)
    shouted = collect_targets(tables(), choose, shown=lambda e: str(e["text"]).upper())
    assert shouted[1].context[1].text == "HELLO THERE"


def test_the_rule_judge_applies_the_task_rule_and_refuses_a_task_without_one() -> None:
    client = build_client([])
    found = collect_targets(tables(), choose)
    verdicts = [asyncio.run(RuleJudge().judge(client, t)) for t in found]
    assert [v.label for v in verdicts] == ["long", "short"]  # 11 and 2 characters, limit 6
    assert rule_gaps([LENGTH, FREE]) == ["free"]
    free = collect_targets(tables(), lambda e, m: Pick(FREE, "x", None) if e["seq"] == 1 else None)
    with pytest.raises(ValueError, match="no rule"):
        asyncio.run(RuleJudge().judge(client, free[0]))


def test_samples_are_seeded_and_stored_order_is_kept() -> None:
    found = collect_targets(tables(), choose)
    assert sample_targets(found, 1, seed=4) == sample_targets(found, 1, seed=4)
    assert sample_targets(found, 5) == found
    with pytest.raises(ValueError):
        sample_targets(found, 0)


def test_a_task_needs_a_name_and_distinct_labels() -> None:
    with pytest.raises(ValueError):
        JudgeTask("bad name", ("a", "b"), prompt=lambda t: "")
    with pytest.raises(ValueError):
        JudgeTask("one", ("a", "a"), prompt=lambda t: "")


def test_judging_filters_targets_by_task_name() -> None:
    def chooser(tables: RunTables) -> Chooser:
        def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
            if event["kind"] != "message" or event["value"] is None:
                return None
            return Pick(LENGTH if event["seq"] == 1 else FREE, event["text"], meta["limit"])

        return choose

    judging = Judging((LENGTH, FREE), chooser)
    assert [t.kind for t in judging.targets(tables())] == ["length", "free"]
    assert [t.event_seq for t in judging.targets(tables(), ["free"])] == [4]
    assert judging.targets(tables(), ["elsewhere"]) == []
    with pytest.raises(ValueError, match="distinct"):
        Judging((LENGTH, LENGTH), chooser)
