"""Choose a false answer for each item from other items' answers of the same kind."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from backchannel.datasets._item import DroppedItem, FactItem
from backchannel.datasets._shape import answer_shape
from backchannel.datasets._text import aliases_overlap, contains_phrase

_RANDOM_TRIES = 32


@dataclass(frozen=True)
class Candidate:
    """An item before its false answer is fixed: what the loaders read from a row."""

    item_id: str
    dataset: str
    question: str
    true_answer: str
    true_aliases: tuple[str, ...]
    relation: str
    answer_type: str
    pool: str
    """Items draw false answers only from items with the same pool key (relation or type)."""
    false_answer: str | None = None
    """A false answer given by the dataset itself (CounterFact's target_new), if any."""

    @property
    def shape(self) -> str:
        return answer_shape(self.true_answer, self.answer_type)


def false_problem(candidate: Candidate, false_aliases: Sequence[str], false_shape: str) -> str:
    """Why a false answer breaks the rules (another shape, a shared alias, named in the
    question), or "" when it keeps them."""
    if false_shape != candidate.shape:
        return (
            f"is not of the true answer's kind (shape {false_shape}, the true answer's "
            f"{candidate.shape}: a year must stand for a year, a number for a number in the same "
            "unit)"
        )
    if aliases_overlap(candidate.true_aliases, false_aliases):
        return "shares an alias with the true answer"
    named = [alias for alias in false_aliases if contains_phrase(candidate.question, alias)]
    if named:
        return f"is named in the question ({named[0]!r})"
    return ""


def is_valid_false(candidate: Candidate, false_aliases: Sequence[str], false_shape: str) -> bool:
    """The false-answer rules: no shared alias, not named in the question, same shape."""
    return not false_problem(candidate, false_aliases, false_shape)


def _make_item(candidate: Candidate, false_answer: str, false_aliases: tuple[str, ...]) -> FactItem:
    return FactItem(
        item_id=candidate.item_id,
        dataset=candidate.dataset,
        question=candidate.question,
        true_answer=candidate.true_answer,
        true_aliases=candidate.true_aliases,
        false_answer=false_answer,
        false_aliases=false_aliases,
        relation=candidate.relation,
        answer_type=candidate.answer_type,
    )


def assign_false_answers(
    candidates: Sequence[Candidate], *, seed: int = 0
) -> tuple[list[FactItem], list[DroppedItem]]:
    """Give every candidate a valid false answer; return the items and the rows dropped, each
    with its reason.

    A candidate with its own false answer keeps it if it passes the rules. Otherwise the false
    answer is another candidate's true answer (with its aliases) from the same pool, picked in a
    random order seeded by ``seed`` and the item id, so the choice is reproducible.
    """
    pools: dict[str, list[Candidate]] = defaultdict(list)
    for cand in candidates:
        if cand.true_aliases and cand.true_aliases[0] == cand.true_answer:
            pools[cand.pool].append(cand)
    items: list[FactItem] = []
    dropped: list[DroppedItem] = []
    for cand in candidates:
        if not cand.true_aliases or cand.true_aliases[0] != cand.true_answer:
            reason = f"its true answer {cand.true_answer!r} has no letters or digits to match"
            dropped.append(DroppedItem(cand.item_id, reason, len(items)))
            continue
        if cand.false_answer is not None:
            own = (cand.false_answer,)
            problem = false_problem(cand, own, answer_shape(cand.false_answer, cand.answer_type))
            if problem:
                reason = f"its false answer {cand.false_answer!r} {problem}"
                dropped.append(DroppedItem(cand.item_id, reason, len(items)))
            else:
                items.append(_make_item(cand, cand.false_answer, own))
            continue
        chosen = _draw(cand, pools[cand.pool], random.Random(f"{seed}/{cand.item_id}"))
        if chosen is None:
            reason = (
                f"no other item of its pool {cand.pool!r} has an answer usable as its false "
                f"answer (of shape {cand.shape}, sharing no alias, not named in the question)"
            )
            dropped.append(DroppedItem(cand.item_id, reason, len(items)))
        else:
            items.append(_make_item(cand, chosen.true_answer, chosen.true_aliases))
    return items, dropped


def _draw(cand: Candidate, pool: list[Candidate], rng: random.Random) -> Candidate | None:
    """A random valid donor from ``pool``: a few random picks, then a full shuffled scan."""

    def ok(other: Candidate) -> bool:
        return other.item_id != cand.item_id and is_valid_false(
            cand, other.true_aliases, other.shape
        )

    if not pool:
        return None
    for _ in range(_RANDOM_TRIES):
        other = pool[rng.randrange(len(pool))]
        if ok(other):
            return other
    order = list(range(len(pool)))
    rng.shuffle(order)
    for index in order:
        if ok(pool[index]):
            return pool[index]
    return None
