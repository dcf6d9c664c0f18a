"""Holm and Bonferroni against statsmodels, with tests that could not run left out."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from backchannel.analysis import bonferroni, holm

P = [0.01, 0.04, 0.03, 0.5, 0.04]


@pytest.mark.parametrize(("function", "method"), [(holm, "holm"), (bonferroni, "bonferroni")])
def test_matches_statsmodels(function, method: str) -> None:
    expected = multipletests(P, method=method)[1]
    assert function(P) == pytest.approx(list(expected), rel=1e-9)


@pytest.mark.parametrize(("function", "method"), [(holm, "holm"), (bonferroni, "bonferroni")])
@pytest.mark.parametrize(
    "p_values",
    [
        [0.2],
        [0.0, 1.0],
        [0.5, 0.5, 0.5, 0.5],  # ties
        [0.9, 0.8, 0.01, 0.01, 0.3],
        [1e-300, 0.7, 0.049999, 0.05, 0.050001, 1.0],
        [0.37, 0.11, 0.62, 0.004, 0.28, 0.91, 0.045, 0.045, 0.33, 0.5, 0.018],
    ],
)
def test_identical_to_statsmodels(function, method: str, p_values: list[float]) -> None:
    # Bit for bit, not only close: the figures of `metrics --json` must not move.
    assert function(p_values) == [float(p) for p in multipletests(p_values, method=method)[1]]


@pytest.mark.parametrize(("function", "method"), [(holm, "holm"), (bonferroni, "bonferroni")])
def test_identical_to_statsmodels_on_random_families(function, method: str) -> None:
    rng = np.random.default_rng(7)
    for size in range(1, 60):
        p_values = rng.random(size).round(int(rng.integers(1, 8))).tolist()  # ties from rounding
        assert function(p_values) == [float(p) for p in multipletests(p_values, method=method)[1]]


def test_by_hand() -> None:
    # Holm on [0.01, 0.04, 0.03]: sorted 0.01 x 3, 0.03 x 2, 0.04 x 1 -> 0.03, 0.06, 0.06.
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert bonferroni([0.01, 0.2, 0.5]) == pytest.approx([0.03, 0.6, 1.0])


def test_skipped_tests_stay_none_and_do_not_count() -> None:
    assert holm([0.01, None, 0.04, math.nan]) == [
        pytest.approx(0.02),
        None,
        pytest.approx(0.04),
        None,
    ]
    assert bonferroni([None, None]) == [None, None]
    assert holm([]) == []
    assert holm([0.3]) == [pytest.approx(0.3)]  # one test: nothing to adjust


def test_refuses_impossible_p_values() -> None:
    with pytest.raises(ValueError, match="outside"):
        holm([1.5])


def test_collector_state_is_restored() -> None:
    # The objects frozen for statsmodels' gc.collect() are given back to the collector.
    import gc

    before = gc.get_freeze_count()
    holm([0.01, 0.2, 0.03])
    assert gc.get_freeze_count() == before
