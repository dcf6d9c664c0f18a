"""Holm and Bonferroni against statsmodels, with tests that could not run left out."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.multitest import multipletests

from backchannel.analysis import bonferroni, holm

P = [0.01, 0.04, 0.03, 0.5, 0.04]


@pytest.mark.parametrize(("function", "method"), [(holm, "holm"), (bonferroni, "bonferroni")])
def test_matches_statsmodels(function, method: str) -> None:
    expected = multipletests(P, method=method)[1]
    assert function(P) == pytest.approx(list(expected), rel=1e-9)


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
