"""Shared interval estimates: bootstrap and t-based confidence intervals.

Every function takes an explicit seed so that a report is reproducible from a stored run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval; `n` is the number of units."""

    estimate: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n}


def _as_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError("expected a one-dimensional sequence of numbers")
    return array


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for the mean of independent units."""
    array = _as_array(values)
    n = len(array)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    mean = float(array.mean())
    if n == 1 or np.all(array == array[0]):
        return Interval(mean, mean, mean, n)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, size=(resamples, n))
    means = array[indices].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(mean, float(low), float(high), n)


def paired_bootstrap_diff_ci(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for mean(first - second) over paired units."""
    a, b = _as_array(first), _as_array(second)
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    return bootstrap_mean_ci(a - b, confidence=confidence, resamples=resamples, seed=seed)


def t_mean_ci(values: Sequence[float] | np.ndarray, *, confidence: float = 0.95) -> Interval:
    """Student-t interval for the mean: mean ± t(n-1) · sd / sqrt(n)."""
    array = _as_array(values)
    n = len(array)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    mean = float(array.mean())
    if n == 1:
        return Interval(mean, float("nan"), float("nan"), 1)
    sem = float(stats.sem(array))
    if sem == 0:
        return Interval(mean, mean, mean, n)
    low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=sem)
    return Interval(mean, float(low), float(high), n)
