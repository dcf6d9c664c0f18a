"""Between-state tests and rank-biserial effects against scipy."""

import numpy as np
import pytest
from scipy import stats

from backchannel.paradigms.council import bonferroni, mann_whitney, wilcoxon
from backchannel.paradigms.council._stats import _paired_r, rank_biserial_paired

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
    assert result is not None
    assert result.statistic == 4 and result.effect.estimate == 1.0
    assert mann_whitney([], [1.0]) is None


def test_wilcoxon_matches_scipy_and_rank_biserial_formula():
    first = [0.571, 0.357, 0.786, 0.143, 0.571, 0.357, 1.0, 0.357]
    second = [0.5, 0.357, 0.6, 0.2, 0.3, 0.1, 0.7, 0.36]
    result = wilcoxon(first, second, alternative="greater", resamples=2000, seed=2)
    assert result is not None
    ref = stats.wilcoxon(first, second, alternative="greater")
    assert result.statistic == pytest.approx(ref.statistic)
    assert result.p_value == pytest.approx(ref.pvalue)
    # One zero difference dropped: 7 non-zero, rank sum 28; r = 2 T+ / 28 - 1.
    assert result.effect.estimate == pytest.approx(2 * ref.statistic / 28 - 1)
    assert result.effect.n == 8
    assert result.effect.low <= result.effect.estimate <= result.effect.high


def test_paired_rank_biserial_by_hand():
    # d = [2, -1, 0, 3]: zero dropped; |d| ranks 2 -> 2, 1 -> 1, 3 -> 3. T+ = 5, T- = 1.
    # r = (5 - 1) / 6 = 2/3.
    assert rank_biserial_paired(np.array([2.0, -1.0, 0.0, 3.0])) == pytest.approx(2 / 3)


def test_vectorised_paired_r_equals_scipy_on_every_row():
    rng = np.random.default_rng(0)
    diffs = rng.integers(-3, 4, size=(20, 9)).astype(float)
    rows = _paired_r(diffs)
    for row, r in zip(diffs, rows, strict=True):
        nonzero = row[row != 0]
        if len(nonzero) == 0:
            assert np.isnan(r)
            continue
        t_plus = stats.wilcoxon(row, alternative="greater").statistic
        total = len(nonzero) * (len(nonzero) + 1) / 2
        assert r == pytest.approx(2 * t_plus / total - 1)


def test_wilcoxon_undefined_when_no_difference():
    assert wilcoxon([1.0, 2.0], [1.0, 2.0]) is None


def test_bonferroni():
    assert bonferroni([0.01, 0.2, 0.5]) == [0.03, pytest.approx(0.6), 1.0]
