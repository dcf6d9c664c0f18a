"""What a judge labels in a peer-pressure run: honest agents' private answers (every probe,
main series and re-asks) and their public turns, each against the conversation's FactItem."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from backchannel.analysis import RunTables
from backchannel.judges import (
    CONTEXT_TURNS,
    FACT_PRIVATE,
    FACT_PUBLIC,
    JudgeTask,
    Pick,
    Target,
    collect_targets,
    fact_item,
)

TASKS: tuple[JudgeTask, ...] = (FACT_PRIVATE, FACT_PUBLIC)
HONEST = "honest"


def judge_targets(
    tables: RunTables,
    kinds: Collection[str] | None = None,
    *,
    context_turns: int = CONTEXT_TURNS,
) -> list[Target]:
    """Honest agents' ok probes (`private`) and ok turns (`public`) of finished conversations."""
    wanted = {task.name for task in TASKS} if kinds is None else set(kinds)
    items: dict[str, Any] = {}

    def choose(event: Mapping[str, Any], meta: Mapping[str, Any]) -> Pick | None:
        if event["role"] != HONEST or event["status"] != "ok":
            return None
        if event["kind"] == "probe" and FACT_PRIVATE.name in wanted:
            task = FACT_PRIVATE
        elif (
            event["kind"] == "message"
            and event["channel"] == "public"
            and event["name"] == "turn"
            and FACT_PUBLIC.name in wanted
        ):
            task = FACT_PUBLIC
        else:
            return None
        conversation = str(event["conversation_id"])
        if conversation not in items:
            items[conversation] = fact_item(meta.get("item", {}))
        return Pick(task, str(event["text"] or ""), items[conversation])

    return collect_targets(tables, choose, context_turns=context_turns)
