"""Between-state tests: one-sided Mann-Whitney U (A vs B), Wilcoxon signed-rank (B vs C).

Each test is paired with its rank-biserial effect and a bootstrap interval; the statistics
themselves are those of `backchannel.analysis`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from backchannel.analysis import (
    ZERO_TOLERANCE,
    Interval,
    TestResult,
    bonferroni,
    mann_whitney_u,
    rank_biserial_independent_ci,
    rank_biserial_paired_ci,
    wilcoxon_signed_rank,
)

Alternative = Literal["greater", "less"]

__all__ = [
    "ZERO_TOLERANCE",
    "Alternative",
    "ComparisonResult",
    "bonferroni",
    "mann_whitney",
    "wilcoxon",
]


@dataclass(frozen=True)
class ComparisonResult:
    """One test with its rank-biserial effect; `skipped` says why the test could not run."""

    test: str
    alternative: Alternative
    statistic: float
    p_value: float
    effect: Interval
    n: int
    p_adjusted: float | None = None
    skipped: str | None = None
    details: TestResult | None = None

    def __post_init__(self) -> None:
        if self.test not in ("mann_whitney_u", "wilcoxon_signed_rank"):
            raise ValueError(f"unknown test {self.test!r}")
        if self.alternative not in ("greater", "less"):
            raise ValueError(f"alternative must be 'greater' or 'less', got {self.alternative!r}")

    @property
    def computed(self) -> bool:
        return self.skipped is None

    def as_dict(self) -> dict[str, Any]:
        extra = dict(self.details.counts) if self.details is not None else {}
        return {
            "test": self.test,
            "alternative": self.alternative,
            "method": self.details.method if self.details is not None else None,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "n": self.n,
            **extra,
            "rank_biserial": self.effect.as_dict(),
            "skipped": self.skipped,
        }


def _combine(test: TestResult, effect: Interval, alternative: Alternative) -> ComparisonResult:
    return ComparisonResult(
        test.test,
        alternative,
        test.statistic,
        test.p_value,
        effect,
        test.n,
        skipped=test.skipped,
        details=test,
    )


def mann_whitney(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    alternative: Alternative = "greater",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonResult:
    """One-sided Mann-Whitney U of first vs second with a bootstrap interval for r.

    Missing values are left out; skipped (with its reason) when a group has no value.
    """
    test = mann_whitney_u(first, second, alternative=alternative)
    if not test.computed:
        effect = Interval(math.nan, math.nan, math.nan, test.n, test.skipped, test.missing)
    else:
        effect = rank_biserial_independent_ci(
            first, second, confidence=confidence, resamples=resamples, seed=seed
        )
    return _combine(test, effect, alternative)


def wilcoxon(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    alternative: Alternative = "greater",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonResult:
    """One-sided Wilcoxon signed-rank of paired first - second with a bootstrap interval for r.

    Pairs with a missing value are left out; differences within `ZERO_TOLERANCE` of zero are
    zero and dropped, so n (of the test and of the effect) counts the non-zero pairs. Skipped
    (with its reason) when every difference is zero.
    """
    test = wilcoxon_signed_rank(first, second, alternative=alternative)
    if not test.computed:
        effect = Interval(math.nan, math.nan, math.nan, 0, test.skipped, test.missing)
    else:
        effect = rank_biserial_paired_ci(
            first, second, confidence=confidence, resamples=resamples, seed=seed
        )
    return _combine(test, effect, alternative)
