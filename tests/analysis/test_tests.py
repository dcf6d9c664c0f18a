"""Hypothesis tests against scipy and statsmodels on fixed data with ties, zeros and NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from backchannel.analysis import (
    ZERO_TOLERANCE,
    mann_whitney_u,
    mcnemar_test,
    paired_differences,
    sign_test,
    welch_t_test,
    wilcoxon_signed_rank,
)

REL = 1e-9
A = np.array([0.714, 0.571, 1.0, 0.786, 0.571, 0.357, 0.786, 1.0])
B = np.array([0.357, 0.143, 0.571, 0.143, 0.357, 0.571, 0.143])
SIDES = ("two-sided", "greater", "less")


@pytest.mark.parametrize("alternative", SIDES)
def test_welch_matches_scipy(alternative: str) -> None:
    result = welch_t_test(A, B, alternative=alternative)
    ref = stats.ttest_ind(A, B, equal_var=False, alternative=alternative)
    assert result.statistic == pytest.approx(ref.statistic, rel=REL)
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert result.df == pytest.approx(ref.df, rel=REL)
    assert result.estimate == pytest.approx(A.mean() - B.mean(), rel=REL)
    assert result.n == 15 and result.counts == {"n_first": 8, "n_second": 7}


def test_welch_by_hand() -> None:
    # [1, 2, 3] vs [2, 4, 6]: variances 1 and 4, se² = 1/3 + 4/3 = 5/3, t = -2 / sqrt(5/3);
    # Welch-Satterthwaite df = (5/3)² / ((1/3)²/2 + (4/3)²/2) = 25/9 / (17/18) = 50/17.
    result = welch_t_test([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert result.statistic == pytest.approx(-2 / math.sqrt(5 / 3), rel=REL)
    assert result.df == pytest.approx(50 / 17, rel=REL)


def test_welch_leaves_out_nan_and_skips_what_it_cannot_test() -> None:
    with_nan = welch_t_test([*A, math.nan], B)
    assert with_nan.missing == 1 and with_nan.n == 15
    assert with_nan.p_value == pytest.approx(welch_t_test(A, B).p_value, rel=REL)
    one = welch_t_test([1.0], [1.0, 2.0])
    assert one.skipped == "fewer than two values in a group" and math.isnan(one.p_value)
    assert one.estimate == pytest.approx(-0.5)
    flat = welch_t_test([1.0, 1.0], [2.0, 2.0])
    assert flat.skipped == "no spread in either group" and flat.estimate == -1.0


@pytest.mark.parametrize("alternative", SIDES)
@pytest.mark.parametrize(
    ("x", "y", "method"),
    [
        (A, B, "asymptotic"),  # ties
        ([3.1, 4.2, 5.3], [1.0, 2.0, 6.0, 0.5], "exact"),  # small, no ties
        (np.arange(10.0), np.arange(0.5, 12.5), "asymptotic"),  # both above 8
        ([1.0, 1.0, 1.0], [1.0, 1.0], "asymptotic"),  # all equal
        ([2.0], [1.0, 3.0], "exact"),  # n = 1
    ],
)
def test_mann_whitney_matches_scipy_auto(x, y, method: str, alternative: str) -> None:
    result = mann_whitney_u(x, y, alternative=alternative)
    ref = stats.mannwhitneyu(x, y, alternative=alternative)  # method="auto"
    assert result.method == method
    assert result.statistic == pytest.approx(ref.statistic, rel=REL)
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert result.estimate == pytest.approx(ref.statistic / (len(x) * len(y)), rel=REL)
    assert result.n == len(x) + len(y)


def test_mann_whitney_hand_case_and_missing_values() -> None:
    # Every value of [3, 4] beats every value of [1, 2]: U = 4 of 4; exact one-sided p = 1/6.
    result = mann_whitney_u([3.0, 4.0, math.nan], [1.0, 2.0], alternative="greater")
    assert result.statistic == 4 and result.p_value == pytest.approx(1 / 6, rel=REL)
    assert result.missing == 1 and result.n == 4
    empty = mann_whitney_u([math.nan], [1.0])
    assert empty.skipped == "a group has no values" and empty.missing == 1


DIFF_FIRST = np.array([0.571, 0.357, 0.786, 0.143, 0.571, 0.357, 1.0, 0.357])
DIFF_SECOND = np.array([0.5, 0.357, 0.6, 0.2, 0.3, 0.1, 0.7, 0.36])


@pytest.mark.parametrize("alternative", SIDES)
@pytest.mark.parametrize(
    ("first", "second", "method"),
    [
        (DIFF_FIRST, DIFF_SECOND, "permutation"),  # one zero difference
        ([3.0, 1.0, 4.0, 1.5, 9.0], [1.0, 1.0, 1.0, 2.0, 1.0], "permutation"),  # zero, tie
        ([2.0, 4.0, 7.0, 1.0, -3.0, 0.5], [0.0] * 6, "exact"),  # no ties, no zeros
        (np.arange(20.0) % 7, np.zeros(20), "asymptotic"),  # ties and zeros, n > 13
        ([5.0], [4.0], "exact"),  # n = 1
    ],
)
def test_wilcoxon_matches_scipy(first, second, method: str, alternative: str) -> None:
    result = wilcoxon_signed_rank(first, second, alternative=alternative)
    ref = stats.wilcoxon(first, second, alternative=alternative, zero_method="wilcox")
    diffs = np.asarray(first) - np.asarray(second)
    assert result.method == method
    assert result.statistic == pytest.approx(ref.statistic, rel=REL)
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert result.n == int((diffs != 0).sum())
    assert result.counts == {"pairs": len(diffs), "zeros": int((diffs == 0).sum())}


def test_wilcoxon_by_hand() -> None:
    # d = [2, -1, 0, 3]: the zero is dropped; ranks of |d| 2, 1, 3 -> T+ = 5, T- = 1, n = 3.
    # One-sided the statistic is T+; two-sided it is min(T+, T-), as in scipy.
    d = [2.0, -1.0, 0.0, 3.0]
    greater = wilcoxon_signed_rank(d, [0.0] * 4, alternative="greater")
    assert greater.statistic == 5 and greater.n == 3 and greater.counts["zeros"] == 1
    assert wilcoxon_signed_rank(d, [0.0] * 4).statistic == 1


def test_wilcoxon_zero_tolerance_and_skips() -> None:
    # Differences of float sums that are equal in exact arithmetic are zero, not ±1e-16.
    noise = [0.1 + 0.2 - 0.3, 0.7 * 3 - 2.1, -(0.1 * 3 - 0.3)]
    assert all(0 < abs(d) < 1e-15 for d in noise)
    result = wilcoxon_signed_rank(noise, [0.0] * 3)
    assert result.skipped == "every paired difference is zero"
    assert result.n == 0 and result.counts == {"pairs": 3, "zeros": 3}
    assert math.isnan(result.statistic) and math.isnan(result.p_value)
    # A tolerance of zero keeps them, which is what scipy does.
    strict = wilcoxon_signed_rank(noise, [0.0] * 3, tolerance=0.0)
    assert strict.n == 3
    assert wilcoxon_signed_rank([], []).skipped == "no pairs"
    incomplete = wilcoxon_signed_rank([1.0, math.nan, 3.0], [0.0, 1.0, math.nan])
    assert incomplete.missing == 2 and incomplete.n == 1


def test_paired_differences_snaps_only_within_tolerance() -> None:
    diffs, missing = paired_differences([1.0, 1.0 + 2 * ZERO_TOLERANCE], [1.0 - 1e-12, 1.0])
    assert list(diffs) == [0.0, pytest.approx(2 * ZERO_TOLERANCE)] and missing == 0
    with pytest.raises(ValueError, match="same length"):
        paired_differences([1.0], [])


@pytest.mark.parametrize("alternative", SIDES)
def test_sign_test_matches_binomtest(alternative: str) -> None:
    first = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]
    second = [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    result = sign_test(first, second, alternative=alternative)
    # positives: 3-1, 4-2, 5-2, 9-2, 6-2, 5-2, 3-2 = 7; negatives: 1-2 = 1; zeros: 2.
    ref = stats.binomtest(7, 8, 0.5, alternative=alternative)
    assert result.statistic == 7 and result.n == 8
    assert result.counts == {"positive": 7, "negative": 1, "zeros": 2}
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert result.estimate == pytest.approx(7 / 8)


def test_sign_test_by_hand_and_skips() -> None:
    # Two positive signs of two: two-sided exact p = 2 x (1/2)² = 1/2.
    assert sign_test([1.0, 2.0]).p_value == pytest.approx(0.5, rel=REL)
    assert sign_test([0.0, 0.0]).skipped == "every paired difference is zero"
    assert sign_test([]).skipped == "no pairs"
    assert sign_test([1.0, math.nan, -1.0]).missing == 1


def test_mcnemar_exact_matches_statsmodels_and_the_binomial() -> None:
    first = [1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1]
    second = [1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]
    result = mcnemar_test(first, second)
    # b (1 then 0) = 6, c (0 then 1) = 1: exact p = 2 P(X <= 1 | n = 7, 1/2) = 2 x 8/128.
    assert result.counts == {"both": 2, "only_first": 6, "only_second": 1, "neither": 3}
    ref = mcnemar(np.array([[2, 6], [1, 3]]), exact=True)
    assert result.method == "exact binomial" and result.n == 12
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert result.p_value == pytest.approx(16 / 128, rel=REL)
    assert result.statistic == ref.statistic == 1
    assert result.estimate == pytest.approx((1 - 6) / 12)


def test_mcnemar_chi_square_for_many_discordant_pairs() -> None:
    first = [1] * 20 + [0] * 10 + [1] * 5 + [0] * 5
    second = [0] * 20 + [1] * 10 + [1] * 5 + [0] * 5
    result = mcnemar_test(first, second)
    ref = mcnemar(np.array([[5, 20], [10, 5]]), exact=False, correction=True)
    assert result.method == "chi-square, continuity corrected" and result.df == 1
    assert result.statistic == pytest.approx(ref.statistic, rel=REL)
    assert result.statistic == pytest.approx((abs(20 - 10) - 1) ** 2 / 30, rel=REL)
    assert result.p_value == pytest.approx(ref.pvalue, rel=REL)


def test_mcnemar_skips_and_refuses() -> None:
    same = mcnemar_test([1, 0, 1], [1, 0, 1])
    assert same.skipped == "no discordant pairs: the outcome never changed" and same.n == 3
    assert mcnemar_test([], []).skipped == "no pairs"
    assert mcnemar_test([1, math.nan, 0], [0, 1, math.nan]).missing == 2
    with pytest.raises(ValueError, match="binary"):
        mcnemar_test([0.5, 1], [1, 0])


def test_result_as_dict_is_json_ready() -> None:
    entry = wilcoxon_signed_rank([1.0, 1.0], [1.0, 1.0]).as_dict()
    assert entry["statistic"] is None and entry["p_value"] is None
    assert entry["n"] == 0 and entry["zeros"] == 2
    assert entry["skipped"] == "every paired difference is zero"


def test_single_pair_tests_match_their_references() -> None:
    # n = 1: one positive sign, exact two-sided p = 1; one discordant pair, exact p = 1.
    one_sign = sign_test([2.0], [1.0])
    assert one_sign.n == 1
    assert one_sign.p_value == pytest.approx(stats.binomtest(1, 1).pvalue, rel=REL)
    one_pair = mcnemar_test([1], [0])
    assert one_pair.n == 1 and one_pair.counts["only_first"] == 1
    ref = mcnemar(np.array([[0, 1], [0, 0]]), exact=True)
    assert one_pair.p_value == pytest.approx(ref.pvalue, rel=REL)


def test_mcnemar_method_can_be_forced() -> None:
    first = [1] * 20 + [0] * 10
    second = [0] * 20 + [1] * 10
    forced = mcnemar_test(first, second, exact=True)
    assert forced.method == "exact binomial"
    assert forced.p_value == pytest.approx(stats.binomtest(10, 30, 0.5).pvalue, rel=REL)
    chi2 = mcnemar_test([1, 0], [0, 1], exact=False)
    ref = mcnemar(np.array([[0, 1], [1, 0]]), exact=False, correction=True)
    assert chi2.method == "chi-square, continuity corrected"
    assert chi2.p_value == pytest.approx(ref.pvalue, rel=REL)
