"""Tallies of one deliberation's rankings: Borda, first-choice concentration, entropy.

All functions are pure: they take ballots (one evaluator's ranking of the options, with its
optional verification score) and the scenario's option ids, and never call a model. Tallies are
summed in exact rational arithmetic (each score is the exact value of its float) and rounded
once at the end, so two tallies that are equal in exact arithmetic (equal weights) give
identical floats: the weighted state C then equals state B exactly, not to within 1e-16.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Ballot:
    """One evaluator's ranking (option ids, best first) and its verification score, if any."""

    evaluator: str
    value: str
    ranking: tuple[str, ...]
    score: float | None = None

    def __post_init__(self) -> None:
        if not self.ranking:
            raise ValueError(f"ballot of {self.evaluator!r} ranks no option")
        if len(set(self.ranking)) != len(self.ranking):
            raise ValueError(f"ballot of {self.evaluator!r} ranks an option twice: {self.ranking}")
        if self.score is not None and not 0.0 <= self.score <= 1.0:
            raise ValueError(f"verification score must lie in [0, 1], got {self.score}")

    @property
    def first(self) -> str:
        return self.ranking[0]


@dataclass(frozen=True)
class Tally:
    """Scores per option with the winner(s) and the margin over the runner-up."""

    scores: Mapping[str, float]
    winners: tuple[str, ...]
    margin: float
    """(winner's score - runner-up's score) / the maximum possible score; 0 on a tie."""

    def __post_init__(self) -> None:
        if not self.scores:
            raise ValueError("a tally needs at least one option")

    @property
    def winner(self) -> str | None:
        """The unique winner, or None on a tie."""
        return self.winners[0] if len(self.winners) == 1 else None

    @property
    def tied(self) -> bool:
        return len(self.winners) > 1


def _check(ballots: Sequence[Ballot], options: Sequence[str]) -> None:
    if len(options) < 2:
        raise ValueError("a council needs at least two options")
    known = set(options)
    for ballot in ballots:
        if set(ballot.ranking) != known or len(ballot.ranking) != len(options):
            raise ValueError(
                f"ballot of {ballot.evaluator!r} ranks {ballot.ranking}, expected every one of "
                f"{tuple(options)} exactly once"
            )


def _weight(ballot: Ballot, weighted: bool) -> Fraction:
    if not weighted:
        return Fraction(1)
    if ballot.score is None:
        raise ValueError(f"ballot of {ballot.evaluator!r} has no verification score to weight by")
    return Fraction(ballot.score)


def _tally(scores: dict[str, Fraction], maximum: Fraction) -> Tally:
    ordered = sorted(scores.values(), reverse=True)
    best = ordered[0]
    winners = tuple(option for option, score in scores.items() if score == best)
    runner_up = ordered[1] if len(ordered) > 1 else Fraction(0)
    margin = Fraction(0) if len(winners) > 1 or maximum == 0 else (best - runner_up) / maximum
    return Tally(
        scores={option: float(score) for option, score in scores.items()},
        winners=winners,
        margin=float(margin),
    )


def borda(ballots: Sequence[Ballot], options: Sequence[str], *, weighted: bool = False) -> Tally:
    """Borda count: with m options, first place earns m-1 points, last earns 0 (2/1/0 for m=3).

    Weighted, every evaluator's points are multiplied by its verification score; nobody is
    dropped, so a low score shrinks a voice instead of silencing it by a threshold. The margin
    is divided by the maximum possible score, (m-1) x evaluators or (m-1) x the sum of weights.
    Ties are exact: options tie when their exact point totals are equal.
    """
    _check(ballots, options)
    m = len(options)
    scores = {option: Fraction(0) for option in options}
    total_weight = Fraction(0)
    for ballot in ballots:
        weight = _weight(ballot, weighted)
        total_weight += weight
        for position, option in enumerate(ballot.ranking):
            scores[option] += weight * (m - 1 - position)
    return _tally(scores, (m - 1) * total_weight)


def _exact_shares(
    ballots: Sequence[Ballot], options: Sequence[str], weighted: bool
) -> dict[str, Fraction]:
    _check(ballots, options)
    votes = {option: Fraction(0) for option in options}
    for ballot in ballots:
        votes[ballot.first] += _weight(ballot, weighted)
    total = sum(votes.values(), Fraction(0))
    if total == 0:
        return {}
    return {option: count / total for option, count in votes.items()}


def first_choice_shares(
    ballots: Sequence[Ballot], options: Sequence[str], *, weighted: bool = False
) -> dict[str, float]:
    """Share of (optionally score-weighted) first-choice votes per option; empty when no weight."""
    return {o: float(share) for o, share in _exact_shares(ballots, options, weighted).items()}


def first_choice_concentration(
    ballots: Sequence[Ballot], options: Sequence[str], *, weighted: bool = False
) -> float:
    """FCC = (p_max - 1/m) / (1 - 1/m), p_max the largest first-choice share, m the options.

    0 for a perfectly even split, 1 when all agree. For 7 evaluators and 3 options the
    largest group holds 3..7 votes, giving (3k - 7)/14 = 1/7, 2.5/7, 4/7, 5.5/7, 7/7
    (14.3 %, 35.7 %, 57.1 %, 78.6 %, 100 %). NaN when there is no vote.
    """
    shares = _exact_shares(ballots, options, weighted)
    if not shares:
        return float("nan")
    chance = Fraction(1, len(options))
    return float((max(shares.values()) - chance) / (1 - chance))


def first_choice_entropy(
    ballots: Sequence[Ballot], options: Sequence[str], *, weighted: bool = False
) -> float:
    """Effective perspectives: Shannon entropy in bits of the first-choice vote distribution."""
    shares = first_choice_shares(ballots, options, weighted=weighted)
    if not shares:
        return float("nan")
    return float(-sum(p * math.log2(p) for p in shares.values() if p > 0))
