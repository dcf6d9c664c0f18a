"""Between-state tests: one-sided Mann-Whitney U, Wilcoxon signed-rank, rank-biserial effects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from backchannel.analysis import Interval

Alternative = Literal["greater", "less"]
_CHUNK = 500


@dataclass(frozen=True)
class ComparisonResult:
    """One test: statistic, p-value (raw and Bonferroni-adjusted) and rank-biserial effect."""

    test: str
    alternative: Alternative
    statistic: float
    p_value: float
    effect: Interval
    p_adjusted: float | None = None

    def __post_init__(self) -> None:
        if self.test not in ("mann_whitney_u", "wilcoxon_signed_rank"):
            raise ValueError(f"unknown test {self.test!r}")
        if self.alternative not in ("greater", "less"):
            raise ValueError(f"alternative must be 'greater' or 'less', got {self.alternative!r}")

    def as_dict(self) -> dict[str, object]:
        return {
            "test": self.test,
            "alternative": self.alternative,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "rank_biserial": self.effect.as_dict(),
        }


def _clean(values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[~np.isnan(array)]


def _nan_interval(n: int) -> Interval:
    return Interval(float("nan"), float("nan"), float("nan"), n)


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha])
    return float(low), float(high)


def rank_biserial_independent(x: np.ndarray, y: np.ndarray) -> float:
    """r = P(x > y) - P(x < y) over all cross pairs, which equals 2 U_x / (n_x n_y) - 1."""
    return float(np.sign(x[:, None] - y[None, :]).mean())


def rank_biserial_paired(differences: np.ndarray) -> float:
    """Matched-pairs r = (T+ - T-) / (T+ + T-) over the non-zero differences (Kerby 2014)."""
    return float(_paired_r(differences[None, :])[0])


def _paired_r(diffs: np.ndarray) -> np.ndarray:
    # Rank |d| with zeros included: the z zeros take ranks 1..z, so a non-zero difference's
    # rank among non-zeros is its overall rank minus z (Wilcoxon's zero_method="wilcox").
    zeros = (diffs == 0).sum(axis=1, keepdims=True)
    ranks = stats.rankdata(np.abs(diffs), axis=1) - zeros
    plus = np.where(diffs > 0, ranks, 0.0).sum(axis=1)
    minus = np.where(diffs < 0, ranks, 0.0).sum(axis=1)
    total = plus + minus
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (plus - minus) / np.where(total > 0, total, 1), np.nan)


def mann_whitney(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    alternative: Alternative = "greater",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonResult | None:
    """One-sided Mann-Whitney U of first vs second with a bootstrap interval for r.

    Groups are resampled independently. None when a group has no value.
    """
    x, y = _clean(first), _clean(second)
    if len(x) == 0 or len(y) == 0:
        return None
    result = stats.mannwhitneyu(x, y, alternative=alternative)
    r = rank_biserial_independent(x, y)
    rng = np.random.default_rng(seed)
    signs = np.sign(x[:, None] - y[None, :])
    samples = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        i = rng.integers(0, len(x), size=(size, len(x)))
        j = rng.integers(0, len(y), size=(size, len(y)))
        samples[start : start + size] = signs[i[:, :, None], j[:, None, :]].mean(axis=(1, 2))
    low, high = _percentiles(samples, confidence)
    effect = Interval(r, low, high, len(x) + len(y))
    return ComparisonResult(
        "mann_whitney_u", alternative, float(result.statistic), float(result.pvalue), effect
    )


def wilcoxon(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    alternative: Alternative = "greater",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonResult | None:
    """One-sided Wilcoxon signed-rank of paired first - second with a bootstrap interval for r.

    Pairs with a missing value are dropped; pairs are resampled together. None when every
    difference is zero (the test is undefined).
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    keep = ~(np.isnan(a) | np.isnan(b))
    diffs = a[keep] - b[keep]
    if not np.any(diffs != 0):
        return None
    result = stats.wilcoxon(diffs, alternative=alternative)
    r = rank_biserial_paired(diffs)
    rng = np.random.default_rng(seed)
    samples = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        idx = rng.integers(0, len(diffs), size=(size, len(diffs)))
        samples[start : start + size] = _paired_r(diffs[idx])
    samples = samples[~np.isnan(samples)]
    low, high = _percentiles(samples, confidence) if len(samples) else (float("nan"),) * 2
    effect = Interval(r, low, high, len(diffs))
    return ComparisonResult(
        "wilcoxon_signed_rank", alternative, float(result.statistic), float(result.pvalue), effect
    )


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Bonferroni-adjusted p-values: min(1, p x number of tests)."""
    k = len(p_values)
    return [min(1.0, p * k) for p in p_values]
