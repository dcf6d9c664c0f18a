"""Between-state tests and rank-biserial effects against scipy."""

import numpy as np
import pytest
from scipy import stats

from backchannel.paradigms.council import bonferroni, mann_whitney, wilcoxon

A = [0.714, 0.571, 1.0, 0.786, 0.571, 0.357, 0.786, 1.0]
B = [0.357, 0.143, 0.571, 0.143, 0.357, 0.571, 0.143]


def test_mann_whitney_matches_scipy_and_rank_biserial_formula():
    result = mann_whitney(A, B, alternative="greater", resamples=2000, seed=1)
    assert result is not None
    ref = stats.mannwhitneyu(A, B, alternative="greater")
    assert result.statistic == pytest.approx(ref.statistic)
    assert result.p_value == pytest.approx(ref.pvalue)
    # r = 2 U / (n1 n2) - 1
    assert result.effect.estimate == pytest.approx(2 * ref.statistic / (len(A) * len(B)) - 1)
    assert -1 <= result.effect.low <= result.effect.estimate <= result.effect.high <= 1
    assert result.effect.n == len(A) + len(B)


def test_mann_whitney_hand_case():
    # x = [3, 4], y = [1, 2]: every x beats every y, U = 4, r = 1.
    result = mann_whitney([3, 4], [1, 2], resamples=200)
    assert result.statistic == 4 and result.effect.estimate == 1.0
    empty = mann_whitney([], [1.0])
    assert empty.skipped == "a group has no values" and empty.effect.skipped == empty.skipped
    assert np.isnan(empty.p_value) and empty.as_dict()["n"] == 1


def test_wilcoxon_matches_scipy_and_rank_biserial_formula():
    first = [0.571, 0.357, 0.786, 0.143, 0.571, 0.357, 1.0, 0.357]
    second = [0.5, 0.357, 0.6, 0.2, 0.3, 0.1, 0.7, 0.36]
    result = wilcoxon(first, second, alternative="greater", resamples=2000, seed=2)
    assert result is not None
    ref = stats.wilcoxon(first, second, alternative="greater")
    assert result.statistic == pytest.approx(ref.statistic)
    assert result.p_value == pytest.approx(ref.pvalue)
    # One zero difference dropped: 7 non-zero, rank sum 28; r = 2 T+ / 28 - 1. Both the test's
    # and the effect's n count the non-zero pairs only.
    assert result.effect.estimate == pytest.approx(2 * ref.statistic / 28 - 1)
    assert result.effect.n == result.n == 7
    assert result.as_dict()["zeros"] == 1
    assert result.effect.low <= result.effect.estimate <= result.effect.high


def test_wilcoxon_undefined_when_no_difference():
    result = wilcoxon([1.0, 2.0], [1.0, 2.0])
    assert result.skipped == "every paired difference is zero"
    assert result.n == 0 and result.effect.n == 0


def test_wilcoxon_treats_rounding_noise_as_zero():
    # 0.1 + 0.2 - 0.3 is 5.6e-17 in floating point: a zero difference, not a positive one.
    result = wilcoxon([0.1 + 0.2, 0.7 * 3], [0.3, 2.1])
    assert result.skipped == "every paired difference is zero"
    assert result.as_dict()["zeros"] == 2


def test_bonferroni():
    assert bonferroni([0.01, 0.2, 0.5]) == [0.03, pytest.approx(0.6), 1.0]
