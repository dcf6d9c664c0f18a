"""What a judge labels in a council run: each evaluator's rationale (initial and Delphi-revised
rankings), by whether it reasons from the evaluator's assigned value, and each advocate's public
turn, by the option it argues (`_argued`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from backchannel.analysis import RunTables
from backchannel.judges import Chooser, JudgeTask, Judging, Pick, Target
from backchannel.paradigms.council._argued import ARGUED_TASK, DebateReference, argued_task
from backchannel.paradigms.council._settings import CouncilSettings

RATIONALE_LABELS = ("grounded", "partial", "absent")
ADVOCATE = "advocate"


@dataclass(frozen=True, slots=True)
class ValueReference:
    """The value an evaluator was assigned, as the run defined it."""

    name: str
    definition: str


@cache
def _template() -> str:
    folder = resources.files("backchannel.paradigms.council.prompts")
    return (folder / "judge_rationale.txt").read_text(encoding="utf-8").strip()


def _prompt(target: Target) -> str:
    value = target.reference
    if not isinstance(value, ValueReference):
        raise TypeError("the rationale task needs a council ValueReference")
    return _template().format(
        value_name=value.name,
        value_definition=value.definition,
        rationale=target.text.strip() or "(empty)",
    )


RATIONALE = JudgeTask(name="rationale", labels=RATIONALE_LABELS, prompt=_prompt)
"""A rationale reasons from the assigned value, partly, or not at all (model judges only; the
run's verifier scores the same question on 0..1)."""


def run_values(tables: RunTables) -> dict[str, ValueReference]:
    """The value perspectives of the run's settings (the six fixed ones and its seventh)."""
    resolved = (tables.manifest.get("config_resolved") or {}).get("settings") or {}
    settings = CouncilSettings.model_validate(resolved)
    return {name: ValueReference(name, spec.definition) for name, spec in settings.values.items()}


def _chooser(tables: RunTables) -> Chooser:
    """Every ok ranking with a rationale, against the evaluator's value as the run defined it,
    and every ok advocate turn, against its conversation's scenario."""
    values = run_values(tables)
    debates: dict[str, DebateReference] = {}

    def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
        if event["kind"] == "message":
            return _advocate_turn(event, meta, debates)
        value = event["value"]
        if event["kind"] != "ranking" or event["status"] != "ok" or not isinstance(value, dict):
            return None
        rationale, name = value.get("rationale"), event["meta"].get("value")
        if not isinstance(rationale, str):
            return None
        if name not in values:
            raise ValueError(f"ranking of {event['agent']} names an unknown value {name!r}")
        return Pick(RATIONALE, rationale, values[str(name)])

    return choose


def _advocate_turn(
    event: Mapping[Any, Any], meta: Mapping[str, Any], debates: dict[str, DebateReference]
) -> Pick | None:
    """An ok public advocate turn as an `argued` target of its scenario's task."""
    ok = event["status"] == "ok" and event["channel"] == "public"
    if event["role"] != ADVOCATE or not ok:
        return None
    conversation = str(event["conversation_id"])
    if conversation not in debates:
        debates[conversation] = DebateReference.of(meta.get("item") or {})
    reference = debates[conversation]
    return Pick(argued_task(reference.option_ids), str(event["text"] or ""), reference)


JUDGING = Judging((RATIONALE, ARGUED_TASK), _chooser)
