"""The `argued` judge task: which option an advocate's public turn argues the council should
adopt, read from what the turn says (not from the option the advocate was assigned).

Its labels are the scenario's option ids, `none` (the turn argues for no option: it only
criticises, or is off topic) and `several` (it argues for more than one). The rule reads
endorsements: an option is argued when a clause names it beside an endorsing word ("adopt",
"support", "best", ...) and nothing in the clause denies it ("not X", "rather than X"); a
model judge answers the prompt `prompts/judge_argued.txt` under the label set, strictly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from backchannel.datasets import find_phrase, normalize
from backchannel.judges import JudgeTask, Target
from backchannel.paradigms.council._scenarios import RESERVED_IDS

ARGUED = "argued"
"""The task's name, and the name the inline judge's labels are stored under."""
NONE, SEVERAL = RESERVED_IDS
"""The labels of a turn that argues for no option, and for more than one."""

_CLAUSE_BREAK = re.compile(
    r"[.!?](?=\s|$)|[,;:\n()\u2013\u2014]|\s-\s|\b(?:but|however|although|though|whereas|yet)\b",
    re.IGNORECASE,
)
_ENDORSING = frozenset(
    "adopt adopting adopted support supporting back backing choose choosing chosen pick "
    "recommend recommending favour favor favouring favoring prefer preferring best better "
    "strongest wisest right endorse endorsing accept".split()
)
"""Words that make a clause argue for what it names ("concede" is not one: conceding a point
to an option, "I concede X is cheaper", is not arguing that the council adopt it)."""
_NEGATORS = frozenset({"not", "no", "never", "nor", "neither", "against", "reject"})
_NEGATING_BEFORE: tuple[tuple[str, ...], ...] = (
    ("than",),  # "rather than X", "other than X", "better than X"
    ("instead", "of"),
    ("opposed", "to"),
    ("over",),
    ("unlike",),
    ("except",),
)
_NEGATION_WINDOW = 3


@dataclass(frozen=True, slots=True)
class ArguedOption:
    """One option of the scenario as the judge reads it."""

    id: str
    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class DebateReference:
    """What an `argued` judge reads besides the turn: the policy question and its options
    (not the speaker's assigned option, so the judge reads the text blind to it)."""

    question: str
    options: tuple[ArguedOption, ...]

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(option.id for option in self.options)

    @classmethod
    def of(cls, scenario: Mapping[str, Any]) -> DebateReference:
        """The reference of a scenario payload (`Scenario.as_dict`, a conversation's item)."""
        options = tuple(
            ArguedOption(str(o["id"]), str(o.get("name", o["id"])), str(o.get("description", "")))
            for o in scenario.get("options") or ()
        )
        return cls(str(scenario.get("question", "")).strip(), options)


def _reference(target: Target) -> DebateReference:
    if not isinstance(target.reference, DebateReference):
        raise TypeError(f"task {target.task.name!r} needs a council DebateReference")
    return target.reference


@cache
def _phrases(option: ArguedOption) -> tuple[tuple[str, ...], ...]:
    """The token phrases that name an option: its name, its id read as words and, when its
    name holds a clause break, the one word that stands for the name (`_shielded`)."""
    found: list[tuple[str, ...]] = []
    texts = [option.name, option.id.replace("_", " ")]
    if _CLAUSE_BREAK.search(option.name):
        texts.append(_shield(option))
    for text in texts:
        tokens = tuple(normalize(text).split())
        if tokens and tokens not in found:
            found.append(tokens)
    return tuple(found)


def _shield(option: ArguedOption) -> str:
    return f"argued{option.id.replace('_', '')}name"


def _shielded(text: str, options: Sequence[ArguedOption]) -> str:
    """The text with each option name that holds a clause break ("Build, then rent") written
    as one word, so that splitting into clauses keeps the name whole (longest names first)."""
    for option in sorted(options, key=lambda o: -len(o.name)):
        if _CLAUSE_BREAK.search(option.name) and option.name.split():
            words = r"\s+".join(re.escape(word) for word in option.name.split())
            text = re.sub(rf"(?<!\w){words}(?!\w)", f" {_shield(option)} ", text, flags=re.I)
    return text


def _denied(clause: Sequence[str], start: int, covered: set[int]) -> bool:
    """Whether the mention starting at `clause[start]` is denied ("not X", "rather than X"),
    by the words before it that name no option."""
    lo = max(0, start - _NEGATION_WINDOW)
    before = tuple(clause[i] for i in range(lo, start) if i not in covered)
    if any(token in _NEGATORS for token in before):
        return True
    return any(before[-len(cue) :] == cue for cue in _NEGATING_BEFORE)


def _clause_endorses(clause: list[str], options: Sequence[ArguedOption]) -> list[str]:
    """The options a clause argues for: those it names without denying them, when a word
    outside the names endorses; a mention inside a longer mention of another option does not
    count."""
    spans: list[tuple[int, int, str]] = []
    for option in options:
        for phrase in _phrases(option):
            spans += [(s, s + len(phrase), option.id) for s in find_phrase(clause, list(phrase))]
    kept = [
        (start, end, option_id)
        for start, end, option_id in spans
        if not any(
            other != option_id and lo <= start and end <= hi and hi - lo > end - start
            for lo, hi, other in spans
        )
    ]
    covered = {i for start, end, _ in kept for i in range(start, end)}
    if not any(token in _ENDORSING for i, token in enumerate(clause) if i not in covered):
        return []
    denied: dict[str, bool] = {}
    for start, _, option_id in kept:
        denied[option_id] = denied.get(option_id, True) and _denied(clause, start, covered)
    return [option_id for option_id, no in denied.items() if not no]


def argued_option(text: str, reference: DebateReference) -> str:
    """The rule's label of a turn: the one option it endorses, `none` or `several`.

    An option is endorsed when a clause names it, holds an endorsing word (not one inside an
    option's name) and does not deny it; a clause without an endorsing word argues nothing,
    whatever it names.
    """
    endorsed: list[str] = []
    for part in _CLAUSE_BREAK.split(_shielded(text, reference.options)):
        clause = normalize(part).split() if part else []
        for option_id in _clause_endorses(clause, reference.options) if clause else ():
            if option_id not in endorsed:
                endorsed.append(option_id)
    if not endorsed:
        return NONE
    return endorsed[0] if len(endorsed) == 1 else SEVERAL


@cache
def _template() -> str:
    folder = resources.files("backchannel.paradigms.council.prompts")
    return (folder / "judge_argued.txt").read_text(encoding="utf-8").strip()


def _prompt(target: Target) -> str:
    reference = _reference(target)
    options = "\n".join(f"- {o.id}: {o.name}. {o.description}".rstrip() for o in reference.options)
    return _template().format(
        question=reference.question or "(none)",
        options=options,
        option_ids=", ".join(reference.option_ids),
        message=target.text.strip() or "(empty)",
    )


def _rule(target: Target) -> str:
    return argued_option(target.text, _reference(target))


ARGUED_TASK = JudgeTask(ARGUED, (NONE, SEVERAL), _prompt, _rule)
"""The task as the paradigm declares it (for `judge --kind argued`); each target carries the
task of its scenario, whose labels add the scenario's option ids (`argued_task`)."""


@cache
def argued_task(option_ids: tuple[str, ...]) -> JudgeTask:
    """The `argued` task of one scenario: its option ids, `none` and `several`."""
    clash = {NONE, SEVERAL} & set(option_ids)
    if clash:
        raise ValueError(
            f"option id {sorted(clash)[0]!r} is an `argued` label; rename the scenario's option"
        )
    return JudgeTask(ARGUED, (*option_ids, NONE, SEVERAL), _prompt, _rule)
