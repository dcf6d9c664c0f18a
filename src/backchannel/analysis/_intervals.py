"""Confidence intervals: Student-t and bootstrap intervals for a mean, Wilson for a proportion.

Bootstrap intervals take an explicit seed, so a report is reproducible from a stored run.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis._clean import Numbers, drop_missing, drop_missing_pairs
from backchannel.analysis._results import Interval, skipped_interval

DEFAULT_RESAMPLES = 10_000
# Values resampled per vectorised step. scipy draws each batch's indices from the same
# generator in turn, so batching gives exactly the unbatched intervals while the resamples of
# a large sample stay small in memory (one step of 10,000 x 5,000 indices is 400 MB).
_BATCH_VALUES = 1_000_000


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def t_mean_ci(values: Numbers, *, confidence: float = 0.95) -> Interval:
    """Student-t interval for the mean: mean ± t(n-1) · sd / sqrt(n) (scipy.stats.t.interval).

    NaN values are left out and counted; one value has no spread (skipped); a sample with no
    spread at all gives the zero-width interval [mean, mean].
    """
    _check_confidence(confidence)
    array, missing = drop_missing(values)
    n = len(array)
    if n == 0:
        return skipped_interval("no values", 0, missing=missing)
    mean = float(array.mean())
    if n == 1:
        return skipped_interval(
            "one value: no spread to build an interval from", 1, estimate=mean, missing=missing
        )
    sem = float(stats.sem(array))
    if sem == 0:
        return Interval(mean, mean, mean, n, missing=missing)
    low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=sem)
    return Interval(mean, float(low), float(high), n, missing=missing)


def _mean(sample: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(sample, axis=axis)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    method: str,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[float, float]:
    size = max(len(sample) for sample in data)
    result = stats.bootstrap(
        data,
        statistic,
        n_resamples=resamples,
        batch=max(1, min(resamples, _BATCH_VALUES // max(size, 1))),
        paired=paired,
        vectorized=True,
        confidence_level=confidence,
        method=method,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _bootstrap_mean(
    values: Numbers, method: str, confidence: float, resamples: int, seed: int
) -> Interval:
    _check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    array, missing = drop_missing(values)
    n = len(array)
    if n == 0:
        return skipped_interval("no values", 0, missing=missing)
    mean = float(array.mean())
    if n == 1 or np.all(array == array[0]):
        # Every resample equals the sample: the bootstrap distribution is the point itself.
        return Interval(mean, mean, mean, n, missing=missing)
    low, high = _bootstrap(
        (array,),
        _mean,
        paired=False,
        method=method,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    if math.isnan(low) or math.isnan(high):
        return skipped_interval(
            f"the {method} bootstrap interval is undefined for this sample",
            n,
            estimate=mean,
            missing=missing,
        )
    return Interval(mean, low, high, n, missing=missing)


def bootstrap_mean_ci(
    values: Numbers,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for the mean of independent units.

    scipy.stats.bootstrap(method="percentile") with a seeded generator (Efron & Tibshirani
    1993, ch. 13). NaN values are left out and counted; n = 1 or all-equal values give the
    zero-width interval [mean, mean], since every resample equals the sample.
    """
    return _bootstrap_mean(values, "percentile", confidence, resamples, seed)


def bca_mean_ci(
    values: Numbers,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Bias-corrected and accelerated (BCa) bootstrap interval for the mean.

    scipy.stats.bootstrap(method="BCa") with a seeded generator (Efron 1987). Missing values
    and degenerate samples are handled as in `bootstrap_mean_ci`.
    """
    return _bootstrap_mean(values, "BCa", confidence, resamples, seed)


def paired_bootstrap_diff_ci(
    first: Numbers,
    second: Numbers,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for mean(first - second), resampling pairs together.

    scipy.stats.bootstrap(paired=True, method="percentile"), seeded. A pair with a NaN on
    either side is left out and counted; constant differences give a zero-width interval.
    """
    _check_confidence(confidence)
    a, b, missing = drop_missing_pairs(first, second)
    n = len(a)
    if n == 0:
        return skipped_interval("no complete pairs", 0, missing=missing)
    diffs = a - b
    mean = float(diffs.mean())
    if n == 1 or np.all(diffs == diffs[0]):
        return Interval(mean, mean, mean, n, missing=missing)
    # Resampling the differences draws the same indices as resampling the pairs together
    # (scipy's paired bootstrap resamples an index array the same way), so the interval is
    # scipy.stats.bootstrap(paired=True)'s to the bit, without gathering both samples.
    low, high = _bootstrap(
        (diffs,),
        _mean,
        paired=False,
        method="percentile",
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    return Interval(mean, low, high, n, missing=missing)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion successes / n.

    statsmodels.stats.proportion.proportion_confint(method="wilson") (Wilson 1927). Stays
    inside [0, 1] and is defined at 0 and n successes; n = 0 is skipped.
    """
    _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return skipped_interval("no trials", 0)
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return Interval(successes / n, float(low), float(high), n)
