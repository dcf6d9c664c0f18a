"""Small frozen result types every statistic returns: an estimate or test, its n, and why not.

A statistic that cannot be computed still returns its type, with NaN numbers and a `skipped`
reason in plain words, so a report can say why a figure is missing instead of showing a blank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


def _number(value: float | None) -> float | None:
    """A float for JSON and CSV: NaN and infinities become None."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval over `n` units.

    `missing` counts the NaN inputs left out; `skipped` says why the interval (or the whole
    estimate) could not be computed, and is None when it was.
    """

    estimate: float
    low: float
    high: float
    n: int
    skipped: str | None = None
    missing: int = 0

    def __post_init__(self) -> None:
        if self.n < 0 or self.missing < 0:
            raise ValueError("counts cannot be negative")
        if self.skipped is None and not (math.isnan(self.low) or self.low <= self.high):
            raise ValueError(f"interval [{self.low}, {self.high}] is reversed")

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "skipped": self.skipped,
            "missing": self.missing,
        }


@dataclass(frozen=True)
class TestResult:
    """One hypothesis test: statistic, p-value and the units it used.

    `estimate` is the test's natural effect (a mean difference, a proportion, a kappa) where it
    has one; `counts` holds the test's own tallies (zeros dropped, discordant pairs...).
    """

    __test__: ClassVar[bool] = False  # a result type, not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    alternative: str = "two-sided"
    estimate: float = math.nan
    df: float | None = None
    method: str | None = None
    skipped: str | None = None
    missing: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.alternative not in ("two-sided", "greater", "less"):
            raise ValueError(
                f"alternative must be 'two-sided', 'greater' or 'less', got {self.alternative!r}"
            )
        if self.skipped is None and not math.isnan(self.p_value) and not 0 <= self.p_value <= 1:
            raise ValueError(f"p-value {self.p_value} outside [0, 1]")

    @property
    def computed(self) -> bool:
        return self.skipped is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "alternative": self.alternative,
            "method": self.method,
            "statistic": _number(self.statistic),
            "df": _number(self.df),
            "p_value": _number(self.p_value),
            "estimate": _number(self.estimate),
            "n": self.n,
            "missing": self.missing,
            **{key: int(value) for key, value in self.counts.items()},
            "skipped": self.skipped,
        }


def skipped_interval(
    reason: str, n: int, *, estimate: float = math.nan, missing: int = 0
) -> Interval:
    """An interval that could not be computed, with its reason."""
    return Interval(estimate, math.nan, math.nan, n, skipped=reason, missing=missing)
