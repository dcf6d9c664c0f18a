"""Rank-biserial effects against the rank tests of scipy, and their bootstrap intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from backchannel.analysis import (
    rank_biserial_independent,
    rank_biserial_independent_ci,
    rank_biserial_paired,
    rank_biserial_paired_ci,
)
from backchannel.analysis._effects import paired_rank_biserial_rows

REL = 1e-9
A = [0.714, 0.571, 1.0, 0.786, 0.571, 0.357, 0.786, 1.0]
B = [0.357, 0.143, 0.571, 0.143, 0.357, 0.571, 0.143]


def test_independent_r_equals_two_u_over_n1n2_minus_one_with_ties() -> None:
    u = stats.mannwhitneyu(A, B).statistic
    assert rank_biserial_independent(A, B) == pytest.approx(2 * u / (8 * 7) - 1, rel=REL)
    # [3, 4] vs [1, 2]: every pair favours the first group.
    assert rank_biserial_independent([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert rank_biserial_independent([1.0, 1.0], [1.0]) == 0.0  # all equal
    assert math.isnan(rank_biserial_independent([], [1.0]))
    assert rank_biserial_independent([3.0, math.nan], [1.0]) == 1.0


def test_paired_r_by_hand() -> None:
    # d = [2, -1, 0, 3]: zero dropped; |d| ranks 2, 1, 3; T+ = 5, T- = 1 -> r = 4 / 6.
    assert rank_biserial_paired([2.0, -1.0, 0.0, 3.0], [0.0] * 4) == pytest.approx(2 / 3)
    assert math.isnan(rank_biserial_paired([1.0], [1.0]))


def test_vectorised_paired_r_equals_scipy_on_every_row() -> None:
    rng = np.random.default_rng(0)
    diffs = rng.integers(-3, 4, size=(20, 9)).astype(float)  # many ties and zeros
    for row, r in zip(diffs, paired_rank_biserial_rows(diffs), strict=True):
        nonzero = row[row != 0]
        if len(nonzero) == 0:
            assert np.isnan(r)
            continue
        t_plus = stats.wilcoxon(row, alternative="greater").statistic
        total = len(nonzero) * (len(nonzero) + 1) / 2
        assert r == pytest.approx(2 * t_plus / total - 1, rel=REL)


def test_independent_interval() -> None:
    ci = rank_biserial_independent_ci(A, B, resamples=1000, seed=1)
    assert ci.estimate == pytest.approx(rank_biserial_independent(A, B), rel=REL)
    assert -1 <= ci.low <= ci.estimate <= ci.high <= 1 and ci.n == 15
    assert ci == rank_biserial_independent_ci(A, B, resamples=1000, seed=1)
    empty = rank_biserial_independent_ci([], [1.0, math.nan])
    assert empty.skipped == "a group has no values" and empty.missing == 1


def test_paired_interval_counts_non_zero_pairs() -> None:
    first = [0.571, 0.357, 0.786, 0.143, 0.571, 0.357, 1.0, 0.357]
    second = [0.5, 0.357, 0.6, 0.2, 0.3, 0.1, 0.7, 0.36]
    ci = rank_biserial_paired_ci(first, second, resamples=1000, seed=2)
    assert ci.n == 7  # one zero difference carries no sign
    assert ci.estimate == pytest.approx(rank_biserial_paired(first, second), rel=REL)
    assert ci.low <= ci.estimate <= ci.high
    zero = rank_biserial_paired_ci([0.1 + 0.2], [0.3])
    assert zero.skipped == "every paired difference is zero" and zero.n == 0
