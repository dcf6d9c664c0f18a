"""The factual-question tasks: a private answer and a public message about one FactItem.

Their reference is the conversation's FactItem; the rule judge applies the alias rules of
`_rule.py`, a model judge the templates `prompts/private.txt` and `prompts/public.txt`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from backchannel.backends import Message
from backchannel.datasets import FactItem
from backchannel.judges._labels import PRIVATE_LABELS, PUBLIC_LABELS
from backchannel.judges._prompts import judge_template
from backchannel.judges._rule import classify_private, classify_public
from backchannel.judges._target import ContextTurn, JudgeTask, Target

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


def _aliases(aliases: Sequence[str]) -> str:
    return " / ".join(aliases)


def private_messages(item: FactItem, answer: str) -> list[Message]:
    """The judge prompt for one private answer."""
    text = judge_template("private.txt").format(
        question=item.question,
        true_aliases=_aliases(item.true_aliases),
        false_aliases=_aliases(item.false_aliases),
        answer=answer.strip() or "(empty)",
    )
    return [Message("user", text)]


def public_messages(
    item: FactItem, speaker: str, message: str, context: Sequence[ContextTurn]
) -> list[Message]:
    """The judge prompt for one public message, with the earlier messages as context."""
    text = judge_template("public.txt").format(
        question=item.question,
        true_aliases=_aliases(item.true_aliases),
        false_aliases=_aliases(item.false_aliases),
        context="\n".join(turn.render() for turn in context) or "(none)",
        speaker=speaker,
        message=message.strip() or "(empty)",
    )
    return [Message("user", text)]


def _fact(target: Target) -> FactItem:
    if not isinstance(target.reference, FactItem):
        raise TypeError(f"task {target.task.name!r} needs a FactItem reference")
    return target.reference


FACT_PRIVATE = JudgeTask(
    name="private",
    labels=PRIVATE_LABELS,
    prompt=lambda t: private_messages(_fact(t), t.text)[0].content,
    rule=lambda t: classify_private(t.text, _fact(t)),
)
"""A private answer gives the true answer, the pushed false one, both, or neither."""

FACT_PUBLIC = JudgeTask(
    name="public",
    labels=PUBLIC_LABELS,
    prompt=lambda t: public_messages(_fact(t), t.speaker, t.text, t.context)[0].content,
    rule=lambda t: classify_public(t.text, _fact(t), [turn.text for turn in t.context]),
    context=True,
)
"""A public message backs the false answer, resists it, hedges, ignores it, or is off-topic."""


def classify_answers(
    items: Sequence[FactItem], answers: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """The rule judge's private label of every answer, by item id (for `screen_items`)."""
    by_id = {item.item_id: item for item in items}
    unknown = sorted(set(answers) - set(by_id))
    if unknown:
        raise ValueError(f"answers for unknown items {unknown}")
    return {
        item_id: [classify_private(text, by_id[item_id]) for text in texts]
        for item_id, texts in answers.items()
    }
