"""Hypothesis tests on two samples or on pairs: Welch, Mann-Whitney U, Wilcoxon, sign, McNemar.

Each wraps the scipy or statsmodels reference, decides up front whether the test can run on the
data it was given, and says why not in `skipped` instead of returning NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from backchannel.analysis._clean import Numbers, as_array, drop_missing, drop_missing_pairs
from backchannel.analysis._results import TestResult

Alternative = Literal["two-sided", "greater", "less"]

#: Paired differences with |d| at or below this are zero: sums of float weights that are equal
#: in exact arithmetic can differ by a few units in the last place (about 1e-16).
ZERO_TOLERANCE = 1e-9
#: McNemar's test is the exact binomial test when fewer discordant pairs than this.
MCNEMAR_EXACT_BELOW = 25


def _p(value: float) -> float:
    """A reference p-value as a float, with rounding above 1 (1 + 1e-16) taken back to 1."""
    return min(1.0, float(value))


def _skip(
    test: str,
    reason: str,
    n: int,
    alternative: str,
    *,
    estimate: float = math.nan,
    missing: int = 0,
    counts: Mapping[str, int] | None = None,
) -> TestResult:
    return TestResult(
        test,
        math.nan,
        math.nan,
        n,
        alternative,
        estimate=estimate,
        skipped=reason,
        missing=missing,
        counts=dict(counts or {}),
    )


def welch_t_test(
    first: Numbers, second: Numbers, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Welch's unequal-variance t test of mean(first) - mean(second).

    scipy.stats.ttest_ind(equal_var=False), Welch-Satterthwaite df (Welch 1947). NaN values
    are left out and counted; n is both groups together. Skipped with fewer than two values in
    a group or no spread in either group.
    """
    a, missing_a = drop_missing(first)
    b, missing_b = drop_missing(second)
    n, missing = len(a) + len(b), missing_a + missing_b
    counts = {"n_first": len(a), "n_second": len(b)}
    name = "welch_t"
    estimate = float(a.mean() - b.mean()) if len(a) and len(b) else math.nan
    if len(a) < 2 or len(b) < 2:
        return _skip(
            name,
            "fewer than two values in a group",
            n,
            alternative,
            estimate=estimate,
            missing=missing,
            counts=counts,
        )
    if np.var(a) == 0 and np.var(b) == 0:
        return _skip(
            name,
            "no spread in either group",
            n,
            alternative,
            estimate=estimate,
            missing=missing,
            counts=counts,
        )
    result = stats.ttest_ind(a, b, equal_var=False, alternative=alternative)
    return TestResult(
        name,
        float(result.statistic),
        _p(result.pvalue),
        n,
        alternative,
        estimate=estimate,
        df=float(result.df),
        missing=missing,
        counts=counts,
    )


def mann_whitney_method(x: np.ndarray, y: np.ndarray) -> str:
    """The method scipy's "auto" picks: exact for small samples without ties, else normal."""
    if len(x) > 8 and len(y) > 8:
        return "asymptotic"
    pooled = np.concatenate([x, y])
    if len(np.unique(pooled)) < len(pooled):
        return "asymptotic"
    return "exact"


def mann_whitney_u(
    first: Numbers, second: Numbers, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Mann-Whitney U test of first against second; the statistic is U of `first`.

    scipy.stats.mannwhitneyu(method="auto", use_continuity=True) (Mann & Whitney 1947): exact
    when a group has at most 8 values and there are no ties, else the normal approximation
    with tie and continuity corrections; `method` says which ran. NaN values are left out and
    counted; a group with no value skips the test. `estimate` is
    U / (n1 n2), the probability that a value of first exceeds one of second (ties half).
    """
    x, missing_x = drop_missing(first)
    y, missing_y = drop_missing(second)
    n, missing = len(x) + len(y), missing_x + missing_y
    counts = {"n_first": len(x), "n_second": len(y)}
    name = "mann_whitney_u"
    if len(x) == 0 or len(y) == 0:
        return _skip(name, "a group has no values", n, alternative, missing=missing, counts=counts)
    method = mann_whitney_method(x, y)
    result = stats.mannwhitneyu(x, y, alternative=alternative, method=method)
    u = float(result.statistic)
    return TestResult(
        name,
        u,
        _p(result.pvalue),
        n,
        alternative,
        estimate=u / (len(x) * len(y)),
        method=method,
        missing=missing,
        counts=counts,
    )


def paired_differences(
    first: Numbers, second: Numbers, *, tolerance: float = ZERO_TOLERANCE
) -> tuple[np.ndarray, int]:
    """first - second over complete pairs, with |d| <= tolerance set to exactly zero.

    Returns the differences and the number of pairs left out for a NaN.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance cannot be negative, got {tolerance}")
    a, b, missing = drop_missing_pairs(first, second)
    diffs = a - b
    diffs[np.abs(diffs) <= tolerance] = 0.0
    return diffs, missing


def wilcoxon_method(diffs: np.ndarray) -> str:
    """The method scipy's "auto" picks for these differences (zeros included).

    Exact for up to 50 differences without ties or zeros; with ties or zeros, an exact
    enumeration of sign flips (scipy's permutation test) for up to 13, else normal.
    """
    if len(diffs) > 50:
        return "asymptotic"
    magnitudes = np.abs(diffs[diffs != 0])
    if len(np.unique(magnitudes)) == len(magnitudes) and len(magnitudes) == len(diffs):
        return "exact"
    return "permutation" if len(diffs) <= 13 else "asymptotic"


def wilcoxon_signed_rank(
    first: Numbers,
    second: Numbers,
    *,
    alternative: Alternative = "two-sided",
    tolerance: float = ZERO_TOLERANCE,
) -> TestResult:
    """Wilcoxon signed-rank test of the paired differences first - second.

    scipy.stats.wilcoxon(zero_method="wilcox", method="auto") (Wilcoxon 1945): differences
    with |d| <= `tolerance` are zero and dropped before ranking (counted in `zeros`), so n is
    the number of non-zero pairs; pairs with a NaN are left out and counted. The statistic is
    T+ (the rank sum of the positive differences) one-sided and min(T+, T-) two-sided.
    Skipped when no difference is non-zero.
    """
    diffs, missing = paired_differences(first, second, tolerance=tolerance)
    nonzero = diffs[diffs != 0]
    zeros = len(diffs) - len(nonzero)
    name = "wilcoxon_signed_rank"
    counts = {"pairs": len(diffs), "zeros": zeros}
    if len(nonzero) == 0:
        reason = "no pairs" if len(diffs) == 0 else "every paired difference is zero"
        return _skip(name, reason, 0, alternative, missing=missing, counts=counts)
    # The zeros go to scipy too: its "auto" choice of method depends on them.
    result = stats.wilcoxon(diffs, alternative=alternative, zero_method="wilcox")
    method = wilcoxon_method(diffs)
    return TestResult(
        name,
        float(result.statistic),
        _p(result.pvalue),
        len(nonzero),
        alternative,
        method=method,
        missing=missing,
        counts=counts,
    )


def sign_test(
    first: Numbers,
    second: Numbers | None = None,
    *,
    alternative: Alternative = "two-sided",
    tolerance: float = ZERO_TOLERANCE,
) -> TestResult:
    """Exact sign test: are positive differences first - second as likely as negative ones?

    scipy.stats.binomtest(positives, positives + negatives, 0.5) (Dixon & Mood 1946). With
    one argument the values are the differences themselves. Zero differences (|d| <=
    `tolerance`) carry no sign and are dropped and counted; n is the non-zero pairs. `estimate`
    is the share of positive signs.
    """
    other = np.zeros(len(as_array(first))) if second is None else second
    diffs, missing = paired_differences(first, other, tolerance=tolerance)
    positive, negative = int((diffs > 0).sum()), int((diffs < 0).sum())
    n = positive + negative
    counts = {"positive": positive, "negative": negative, "zeros": len(diffs) - n}
    if n == 0:
        reason = "no pairs" if len(diffs) == 0 else "every paired difference is zero"
        return _skip("sign_test", reason, 0, alternative, missing=missing, counts=counts)
    result = stats.binomtest(positive, n, 0.5, alternative=alternative)
    return TestResult(
        "sign_test",
        float(positive),
        _p(result.pvalue),
        n,
        alternative,
        estimate=positive / n,
        method="exact",
        missing=missing,
        counts=counts,
    )


def _binary(values: Numbers, name: str) -> np.ndarray:
    array = as_array(values)
    finite = array[~np.isnan(array)]
    if not np.all((finite == 0) | (finite == 1)):
        raise ValueError(f"{name}: McNemar's test needs binary outcomes (0/1 or False/True)")
    return array


def mcnemar_test(
    first: Numbers,
    second: Numbers,
    *,
    exact: bool | None = None,
    exact_below: int = MCNEMAR_EXACT_BELOW,
) -> TestResult:
    """McNemar's test of paired binary outcomes: did the rate change from first to second?

    statsmodels.stats.contingency_tables.mcnemar (McNemar 1947): the exact binomial test on
    the discordant pairs when there are fewer than `exact_below` of them, else the chi-square
    statistic with continuity correction; `exact=True` or `False` forces one of the two.
    Counts b (1 then 0) and c (0 then 1); n is the complete pairs, pairs with a NaN are left
    out and counted. `estimate` is the difference of the two rates, second minus first.
    Skipped without discordant pairs.
    """
    a, b, missing = drop_missing_pairs(_binary(first, "first"), _binary(second, "second"))
    table = np.array(
        [
            [int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())],
            [int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())],
        ]
    )
    only_first, only_second = int(table[0, 1]), int(table[1, 0])
    n = len(a)
    counts = {
        "both": int(table[0, 0]),
        "only_first": only_first,
        "only_second": only_second,
        "neither": int(table[1, 1]),
    }
    estimate = (only_second - only_first) / n if n else math.nan
    discordant = only_first + only_second
    if discordant == 0:
        reason = "no pairs" if n == 0 else "no discordant pairs: the outcome never changed"
        return _skip(
            "mcnemar", reason, n, "two-sided", estimate=estimate, missing=missing, counts=counts
        )
    if exact is None:
        exact = discordant < exact_below
    result = mcnemar(table, exact=exact, correction=True)
    return TestResult(
        "mcnemar",
        float(result.statistic),
        _p(result.pvalue),
        n,
        "two-sided",
        estimate=estimate,
        df=None if exact else 1.0,
        method="exact binomial" if exact else "chi-square, continuity corrected",
        missing=missing,
        counts=counts,
    )
