"""Interval estimates against scipy and statsmodels, and what each returns when it cannot run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import (
    Interval,
    bca_mean_ci,
    bootstrap_mean_ci,
    paired_bootstrap_diff_ci,
    t_mean_ci,
    wilson_interval,
)

TIES = np.array([0.0, 0.5, 0.5, 1.0, 0.25, 0.0, 1.0, 0.5])
REL = 1e-9


def test_t_interval_matches_scipy_with_ties_and_zeros() -> None:
    ci = t_mean_ci(TIES)
    low, high = stats.t.interval(0.95, len(TIES) - 1, loc=TIES.mean(), scale=stats.sem(TIES))
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((TIES.mean(), low, high), rel=REL)
    assert ci.n == 8 and ci.skipped is None and ci.missing == 0


def test_t_interval_at_other_confidence() -> None:
    ci = t_mean_ci(TIES, confidence=0.9)
    low, high = stats.t.interval(0.9, 7, loc=TIES.mean(), scale=stats.sem(TIES))
    assert (ci.low, ci.high) == pytest.approx((low, high), rel=REL)


def test_t_interval_leaves_out_and_counts_nan() -> None:
    ci = t_mean_ci([*TIES, math.nan, math.nan])
    assert ci.n == 8 and ci.missing == 2
    assert (ci.low, ci.high) == pytest.approx(
        stats.t.interval(0.95, 7, loc=TIES.mean(), scale=stats.sem(TIES)), rel=REL
    )


def test_t_interval_degenerate_samples() -> None:
    empty = t_mean_ci([])
    assert empty.skipped == "no values" and empty.n == 0 and math.isnan(empty.estimate)
    only_nan = t_mean_ci([math.nan])
    assert only_nan.skipped == "no values" and only_nan.missing == 1
    one = t_mean_ci([3.0])
    assert one.estimate == 3.0 and one.n == 1 and math.isnan(one.low)
    assert one.skipped == "one value: no spread to build an interval from"
    same = t_mean_ci([2.0, 2.0, 2.0])
    assert (same.estimate, same.low, same.high, same.skipped) == (2.0, 2.0, 2.0, None)


def _scipy_bootstrap(data: tuple[np.ndarray, ...], method: str, seed: int, **kw: object):
    def statistic(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        if len(samples) == 2:
            return np.mean(samples[0] - samples[1], axis=axis)
        return np.mean(samples[0], axis=axis)

    return stats.bootstrap(
        data,
        statistic,
        n_resamples=2000,
        method=method,
        rng=np.random.default_rng(seed),
        **kw,  # type: ignore[arg-type]
    ).confidence_interval


def test_percentile_bootstrap_matches_scipy_and_a_hand_resampling() -> None:
    ci = bootstrap_mean_ci(TIES, resamples=2000, seed=5)
    ref = _scipy_bootstrap((TIES,), "percentile", 5)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=REL)
    # The same by hand: 2000 resamples of 8 indices, then the 2.5 % and 97.5 % quantiles.
    indices = np.random.default_rng(5).integers(0, 8, size=(2000, 8))
    means = TIES[indices].mean(axis=1)
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=REL)
    assert ci.estimate == pytest.approx(TIES.mean()) and ci.n == 8


def test_bootstrap_is_reproducible_and_seeded() -> None:
    values = [0.13, 0.71, 0.29, 0.97, 0.02, 0.55, 0.38]
    assert bootstrap_mean_ci(values, seed=1) == bootstrap_mean_ci(values, seed=1)
    assert bootstrap_mean_ci(values, seed=1) != bootstrap_mean_ci(values, seed=2)


def test_bca_bootstrap_matches_scipy() -> None:
    skewed = np.array([0.1, 0.2, 0.2, 0.3, 0.5, 0.9, 2.0, 4.0, 0.0, 0.2])
    ci = bca_mean_ci(skewed, resamples=2000, seed=3)
    ref = _scipy_bootstrap((skewed,), "BCa", 3)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=REL)
    assert ci.n == 10


@pytest.mark.parametrize("function", [bootstrap_mean_ci, bca_mean_ci])
def test_bootstrap_degenerate_samples(function) -> None:
    assert function([]).skipped == "no values"
    # Every resample of one value, or of equal values, is the sample: a zero-width interval.
    assert function([0.5]) == Interval(0.5, 0.5, 0.5, 1)
    assert function([0.5, 0.5, 0.5]) == Interval(0.5, 0.5, 0.5, 3)
    with_nan = function([0.5, math.nan, 0.5])
    assert with_nan.n == 2 and with_nan.missing == 1


def test_paired_bootstrap_matches_scipy_paired() -> None:
    first = np.array([0.5, 0.2, 0.9, 0.5, 0.5, 1.0, 0.0])
    second = np.array([0.1, 0.2, 0.3, 0.5, 0.6, 0.5, 0.0])
    ci = paired_bootstrap_diff_ci(first, second, resamples=2000, seed=4)
    ref = _scipy_bootstrap((first, second), "percentile", 4, paired=True)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=REL)
    assert ci.estimate == pytest.approx((first - second).mean()) and ci.n == 7


def test_paired_bootstrap_drops_incomplete_pairs_and_handles_constant_differences() -> None:
    ci = paired_bootstrap_diff_ci([1.0, 2.0, math.nan, 4.0], [0.0, 1.0, 1.0, math.nan])
    assert ci == Interval(1.0, 1.0, 1.0, 2, missing=2)
    assert paired_bootstrap_diff_ci([], []).skipped == "no complete pairs"
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_diff_ci([1.0], [1.0, 2.0])


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (1, 1), (17, 40)])
def test_wilson_matches_statsmodels_and_the_formula(k: int, n: int) -> None:
    ci = wilson_interval(k, n)
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (ci.low, ci.high) == pytest.approx((low, high), rel=REL, abs=1e-12)
    # Wilson (1927): (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n).
    z, p = stats.norm.ppf(0.975), k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert (ci.low, ci.high) == pytest.approx((centre - half, centre + half), rel=REL, abs=1e-12)
    assert ci.estimate == p and ci.n == n and 0 <= ci.low <= ci.high <= 1


def test_wilson_without_trials_and_bad_counts() -> None:
    none = wilson_interval(0, 0)
    assert none.skipped == "no trials" and none.n == 0
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="confidence"):
        t_mean_ci([1.0, 2.0], confidence=95)
    with pytest.raises(ValueError, match="one-dimensional"):
        bootstrap_mean_ci([[1.0, 2.0]])


def test_interval_as_dict_carries_n_and_reason() -> None:
    assert t_mean_ci([1.0]).as_dict() == {
        "estimate": 1.0,
        "low": pytest.approx(math.nan, nan_ok=True),
        "high": pytest.approx(math.nan, nan_ok=True),
        "n": 1,
        "skipped": "one value: no spread to build an interval from",
        "missing": 0,
    }


def test_bootstrap_of_a_large_sample_equals_scipy_unbatched() -> None:
    # 3,000 values: the resamples are drawn in batches, which must not change a single draw.
    values = np.random.default_rng(3).integers(0, 4, 3_000) / 3
    second = np.random.default_rng(4).integers(0, 4, 3_000) / 3

    def scipy_ci(data: tuple[np.ndarray, ...], method: str, paired: bool = False) -> Any:
        statistic = (
            (lambda a, b, axis=-1: np.mean(a - b, axis=axis))
            if paired
            else (lambda a, axis=-1: np.mean(a, axis=axis))
        )
        result = stats.bootstrap(
            data, statistic, n_resamples=10_000, paired=paired, vectorized=True,
            method=method, rng=np.random.default_rng(0),
        )  # fmt: skip
        return result.confidence_interval

    ours = bootstrap_mean_ci(values)
    assert (ours.low, ours.high) == tuple(scipy_ci((values,), "percentile"))
    ours = bca_mean_ci(values[:500])
    assert (ours.low, ours.high) == tuple(scipy_ci((values[:500],), "BCa"))
    ours = paired_bootstrap_diff_ci(values, second)
    assert (ours.low, ours.high) == tuple(scipy_ci((values, second), "percentile", paired=True))
