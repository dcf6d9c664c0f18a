"""What a judge labels in a dyad run: each turn's argument, by how it treats the other role's
last argument (the ACCEPT / REJECT / IGNORE tag the speaker also declared)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from backchannel.analysis import RunTables
from backchannel.judges import Chooser, JudgeTask, Judging, Pick, Target
from backchannel.paradigms.dyad._scale import Category


@dataclass(frozen=True, slots=True)
class TurnReference:
    """What a dyad judge reads besides the argument: the statement shown and the category the
    speaker declared with its turn."""

    statement: str
    declared: str


@cache
def _template(name: str) -> str:
    folder = resources.files("backchannel.paradigms.dyad.prompts")
    return (folder / name).read_text(encoding="utf-8").strip()


def _reference(target: Target) -> TurnReference:
    if not isinstance(target.reference, TurnReference):
        raise TypeError(f"task {target.task.name!r} needs a dyad TurnReference")
    return target.reference


def _category_prompt(target: Target) -> str:
    return _template("judge_category.txt").format(
        statement=_reference(target).statement,
        context="\n".join(turn.render() for turn in target.context) or "(none)",
        speaker=target.speaker,
        message=target.text.strip() or "(empty)",
    )


CATEGORY = JudgeTask(
    name="category",
    labels=tuple(c.value for c in Category),
    prompt=_category_prompt,
    rule=lambda t: _reference(t).declared,
    context=True,
)
"""How a turn treats the other's last argument; the rule judge reads the speaker's own tag, so
`agree RUN rule MODEL` measures how far self-declared tags match an outside judge."""


def _argument(event: Mapping[Any, Any]) -> str:
    """A turn as the judge reads it: its argument without the declared tag, else its text."""
    argument = event["meta"].get("argument")
    return str(argument) if isinstance(argument, str) else str(event["text"] or "")


def _chooser(tables: RunTables) -> Chooser:
    """Every ok turn (a turn whose JSON failed is not judged), against the statement shown."""

    def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
        if event["kind"] != "message" or event["name"] != "turn" or event["status"] != "ok":
            return None
        reference = TurnReference(str(meta.get("statement_shown", "")), str(event["value"]))
        return Pick(CATEGORY, _argument(event), reference)

    return choose


JUDGING = Judging((CATEGORY,), _chooser, shown=_argument)
