"""Classify evaluator pairs on theoretical tension pairs of values as credible or not."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from backchannel.paradigms.council._values import TENSION_PAIRS, TensionPair
from backchannel.paradigms.council._voting import Ballot

DEFAULT_THRESHOLD = 0.7


class TensionClass(StrEnum):
    """How one pair of evaluators on a tension pair relates."""

    GENUINE_DISAGREEMENT = "genuine_disagreement"  # both faithful, different first choices
    GENUINE_AGREEMENT = "genuine_agreement"  # both faithful, same first choice
    SUSPICIOUS_AGREEMENT = "suspicious_agreement"  # same first choice, at least one unfaithful
    PARTIAL = "partial"  # different first choices, at least one unfaithful
    UNMEASURABLE = "unmeasurable"  # a value has no evaluator, or a score is missing


CREDIBLE = (TensionClass.GENUINE_DISAGREEMENT, TensionClass.GENUINE_AGREEMENT)


@dataclass(frozen=True)
class PairVerdict:
    """The class of one evaluator pair (or of a tension pair no evaluator pair can measure)."""

    pair: TensionPair
    first: str | None
    second: str | None
    cls: TensionClass
    reason: str = ""


def classify(a: Ballot, b: Ballot, threshold: float = DEFAULT_THRESHOLD) -> TensionClass:
    """Class of two evaluators: faithful means score >= threshold, agree means same first choice."""
    if a.score is None or b.score is None:
        return TensionClass.UNMEASURABLE
    faithful = a.score >= threshold and b.score >= threshold
    agree = a.first == b.first
    if faithful:
        return TensionClass.GENUINE_AGREEMENT if agree else TensionClass.GENUINE_DISAGREEMENT
    return TensionClass.SUSPICIOUS_AGREEMENT if agree else TensionClass.PARTIAL


def tension_verdicts(
    ballots: Sequence[Ballot],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    pairs: Sequence[TensionPair] = TENSION_PAIRS,
) -> list[PairVerdict]:
    """One verdict per evaluator pair holding the two values of a tension pair.

    A tension pair whose value has no evaluator yields one unmeasurable verdict; an evaluator
    pair with a missing verification score is unmeasurable too.
    """
    verdicts: list[PairVerdict] = []
    for pair in pairs:
        left = [b for b in ballots if b.value == pair.first]
        right = [b for b in ballots if b.value == pair.second]
        if not left or not right:
            missing = pair.first if not left else pair.second
            verdicts.append(
                PairVerdict(pair, None, None, TensionClass.UNMEASURABLE, f"no {missing} evaluator")
            )
            continue
        for a in left:
            for b in right:
                cls = classify(a, b, threshold)
                reason = "missing verification score" if cls is TensionClass.UNMEASURABLE else ""
                verdicts.append(PairVerdict(pair, a.evaluator, b.evaluator, cls, reason))
    return verdicts


def class_counts(verdicts: Sequence[PairVerdict]) -> dict[str, int]:
    """Counts of every class (zeros included), keyed by the class's value."""
    counts = Counter(v.cls for v in verdicts)
    return {cls.value: counts.get(cls, 0) for cls in TensionClass}


def credible_tension_rate(verdicts: Sequence[PairVerdict]) -> float:
    """(genuine disagreement + genuine agreement) / measurable pairs; NaN if none is."""
    measured = [v for v in verdicts if v.cls is not TensionClass.UNMEASURABLE]
    if not measured:
        return float("nan")
    return sum(v.cls in CREDIBLE for v in measured) / len(measured)


def voice_authenticity_rate(
    ballots: Sequence[Ballot], threshold: float = DEFAULT_THRESHOLD
) -> float:
    """Share of scored evaluators whose verification score is at least `threshold`."""
    scores = [b.score for b in ballots if b.score is not None]
    if not scores:
        return float("nan")
    return sum(s >= threshold for s in scores) / len(scores)
