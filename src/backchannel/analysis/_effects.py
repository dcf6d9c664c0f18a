"""Rank-biserial correlations, the effect sizes of the two rank tests, with bootstrap intervals.

Independent groups: r = P(x > y) - P(x < y) = 2 U / (n1 n2) - 1 (Glass 1965, Kerby 2014).
Paired: r = (T+ - T-) / (T+ + T-) over the non-zero differences (Kerby 2014). The intervals
are percentile bootstraps with an explicit seed: groups resampled independently, pairs together.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from backchannel.analysis._clean import Numbers, drop_missing
from backchannel.analysis._intervals import DEFAULT_RESAMPLES
from backchannel.analysis._results import Interval, skipped_interval
from backchannel.analysis._tests import ZERO_TOLERANCE, paired_differences

_CHUNK = 500


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha])
    return float(low), float(high)


def rank_biserial_independent(first: Numbers, second: Numbers) -> float:
    """r = P(x > y) - P(x < y) over all cross pairs; equals 2 U_x / (n_x n_y) - 1.

    NaN values are left out; NaN when a group is empty.
    """
    x, _ = drop_missing(first)
    y, _ = drop_missing(second)
    if len(x) == 0 or len(y) == 0:
        return float("nan")
    return float(np.sign(x[:, None] - y[None, :]).mean())


def paired_rank_biserial_rows(diffs: np.ndarray) -> np.ndarray:
    """Matched-pairs r of every row of a 2-D array of differences; NaN for an all-zero row."""
    # Rank |d| with zeros included: the z zeros take ranks 1..z, so a non-zero difference's
    # rank among non-zeros is its overall rank minus z (Wilcoxon's zero_method="wilcox").
    zeros = (diffs == 0).sum(axis=1, keepdims=True)
    ranks = stats.rankdata(np.abs(diffs), axis=1) - zeros
    plus = np.where(diffs > 0, ranks, 0.0).sum(axis=1)
    minus = np.where(diffs < 0, ranks, 0.0).sum(axis=1)
    total = plus + minus
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (plus - minus) / np.where(total > 0, total, 1), np.nan)


def rank_biserial_paired(
    first: Numbers, second: Numbers, *, tolerance: float = ZERO_TOLERANCE
) -> float:
    """Matched-pairs r = (T+ - T-) / (T+ + T-) of first - second; zeros (|d| <= tolerance)
    dropped as in `wilcoxon_signed_rank`. NaN when no difference is non-zero."""
    diffs, _ = paired_differences(first, second, tolerance=tolerance)
    if not np.any(diffs != 0):
        return float("nan")
    return float(paired_rank_biserial_rows(diffs[None, :])[0])


def rank_biserial_independent_ci(
    first: Numbers,
    second: Numbers,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Rank-biserial r of two independent groups with a percentile bootstrap interval.

    n is both groups' values together; NaN values are left out and counted.
    """
    x, missing_x = drop_missing(first)
    y, missing_y = drop_missing(second)
    missing = missing_x + missing_y
    if len(x) == 0 or len(y) == 0:
        return skipped_interval("a group has no values", len(x) + len(y), missing=missing)
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
    return Interval(r, low, high, len(x) + len(y), missing=missing)


def rank_biserial_paired_ci(
    first: Numbers,
    second: Numbers,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    tolerance: float = ZERO_TOLERANCE,
) -> Interval:
    """Matched-pairs rank-biserial r with a percentile bootstrap interval over pairs.

    n is the number of non-zero differences (zeros carry no sign); resamples in which every
    difference is zero have no r and are left out of the percentiles.
    """
    diffs, missing = paired_differences(first, second, tolerance=tolerance)
    nonzero = int((diffs != 0).sum())
    if nonzero == 0:
        reason = "no pairs" if len(diffs) == 0 else "every paired difference is zero"
        return skipped_interval(reason, 0, missing=missing)
    r = float(paired_rank_biserial_rows(diffs[None, :])[0])
    rng = np.random.default_rng(seed)
    samples = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        idx = rng.integers(0, len(diffs), size=(size, len(diffs)))
        samples[start : start + size] = paired_rank_biserial_rows(diffs[idx])
    samples = samples[~np.isnan(samples)]
    if len(samples) == 0:
        return skipped_interval(
            "every resample had only zero differences", nonzero, estimate=r, missing=missing
        )
    low, high = _percentiles(samples, confidence)
    return Interval(r, low, high, nonzero, missing=missing)
