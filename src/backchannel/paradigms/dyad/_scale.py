"""The dyad's rating scale, the alignment of ratings and the interaction-state accumulator.

Ratings are 0..6 on the statement shown. Aligning puts both wordings on one axis on which 6 always
means the strongest support for the topic's first statement. The interaction state is a second,
behavioural measure on that axis, driven only by the ACCEPT / REJECT / IGNORE categories.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

SCALE_MIN = 0
SCALE_MAX = 6
SCALE_MID = 3

DISCUSSANT = "discussant"
OPPONENT = "opponent"
ROLES = (DISCUSSANT, OPPONENT)


class Wording(StrEnum):
    """Which of the topic's two statements is shown to both roles."""

    FIRST = "first"
    OPPOSITE = "opposite"


class Category(StrEnum):
    """How a message treats the other role's last argument."""

    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    IGNORE = "IGNORE"


def check_rating(rating: int) -> int:
    """Return `rating` if it lies on the 0..6 scale, else raise ValueError."""
    if isinstance(rating, bool) or not isinstance(rating, int):
        raise ValueError(f"a rating is an integer, got {rating!r}")
    if not SCALE_MIN <= rating <= SCALE_MAX:
        raise ValueError(f"a rating lies in {SCALE_MIN}..{SCALE_MAX}, got {rating}")
    return rating


def align(rating: int, wording: Wording | str) -> int:
    """Map a raw rating of the shown statement onto the first statement's axis.

    z = r when the first statement was shown, z = 6 - r when its opposite was.
    """
    check_rating(rating)
    return rating if Wording(wording) is Wording.FIRST else SCALE_MAX - rating


def step(own: int, other: int, category: Category) -> int:
    """One update of a role's interaction state after one of its own messages.

    ACCEPT moves one step towards `other`, REJECT one step away from it, IGNORE leaves the
    state. Towards an equal state nothing moves;
    away from an equal state moves away from the midpoint 3 (upwards when the state is exactly 3).
    The result is clipped to the scale.
    """
    check_rating(own)
    check_rating(other)
    if category is Category.IGNORE:
        return own
    if category is Category.ACCEPT:
        direction = (other > own) - (other < own)
    elif own != other:
        direction = -((other > own) - (other < own))
    else:
        direction = -1 if own < SCALE_MID else 1
    return min(SCALE_MAX, max(SCALE_MIN, own + direction))


@dataclass(frozen=True)
class StatePath:
    """The two interaction states after each round: `discussant[r]`, `opponent[r]` for r = 0..T.

    Index 0 is the starting state (the aligned pre-rating); index r is the state after the
    role's own message of round r, or None once it is unknown (see `interaction_states`).
    """

    discussant: tuple[int | None, ...]
    opponent: tuple[int | None, ...]

    def __post_init__(self) -> None:
        if len(self.discussant) != len(self.opponent) or not self.discussant:
            raise ValueError("both roles need the same, non-empty number of states")
        for value in (*self.discussant, *self.opponent):
            if value is not None:
                check_rating(value)

    def of(self, role: str) -> tuple[int | None, ...]:
        if role == DISCUSSANT:
            return self.discussant
        if role == OPPONENT:
            return self.opponent
        raise ValueError(f"unknown role {role!r}")


def interaction_states(
    start_discussant: int,
    start_opponent: int,
    rounds: Iterable[tuple[Category | None, Category | None]],
) -> StatePath:
    """Run the accumulator over rounds of (Discussant category, Opponent category).

    Within a round the Discussant speaks first, so the Opponent's step already sees the
    Discussant's updated state; the Discussant's step sees the Opponent's state from the round
    before (its starting state in round 1).

    An unreadable category (None) is not guessed: the speaker's state becomes unknown (None),
    and so does every later state of both roles, since each step reads the other's state.
    """
    d: int | None = check_rating(start_discussant)
    o: int | None = check_rating(start_opponent)
    path_d, path_o = [d], [o]
    for category_d, category_o in rounds:
        d = None if d is None or o is None or category_d is None else step(d, o, category_d)
        o = None if o is None or d is None or category_o is None else step(o, d, category_o)
        path_d.append(d)
        path_o.append(o)
    return StatePath(tuple(path_d), tuple(path_o))


def parse_category(value: object) -> Category | None:
    """A stored category value (already JSON-decoded) as a Category, or None if unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return Category(value.strip().upper())
    except ValueError:
        return None
