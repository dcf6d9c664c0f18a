"""Cohen's kappa computed by hand and against statsmodels, and when it is undefined."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

from backchannel.analysis import cohens_kappa


def test_kappa_by_hand() -> None:
    # Confusion [[3, 1], [2, 4]] over 10 items: p_o = 0.7, p_e = (4 x 5 + 6 x 5) / 100 = 0.5,
    # kappa = (0.7 - 0.5) / 0.5 = 0.4.
    a = ["x"] * 4 + ["y"] * 6
    b = ["x", "x", "x", "y", "x", "x", "y", "y", "y", "y"]
    result = cohens_kappa(a, b, names=("A", "B"))
    assert result.kappa == pytest.approx(0.4, rel=1e-9)
    assert result.percent_agreement == pytest.approx(0.7) and result.n == 10
    assert result.expected_agreement == pytest.approx(0.5)
    assert result.confusion.to_numpy().tolist() == [[3, 1], [2, 4]]
    assert result.confusion.index.name == "A" and result.confusion.columns.name == "B"


def test_kappa_matches_statsmodels_on_three_labels_with_an_unused_one() -> None:
    a = ["p", "q", "q", "r", "p", "p", "q", "r", "r", "p", "q", "q"]
    b = ["p", "q", "r", "r", "q", "p", "q", "p", "r", "p", "q", "r"]
    result = cohens_kappa(a, b, labels=["p", "q", "r", "s"])
    assert result.confusion.shape == (4, 4)
    table = result.confusion.to_numpy()
    assert result.kappa == pytest.approx(statsmodels_kappa(table).kappa, rel=1e-9)
    observed = np.trace(table) / 12
    expected = (table.sum(0) * table.sum(1)).sum() / 144
    assert result.kappa == pytest.approx((observed - expected) / (1 - expected), rel=1e-9)


def test_perfect_and_chance_agreement() -> None:
    assert cohens_kappa(["a", "b", "a"], ["a", "b", "a"]).kappa == pytest.approx(1.0)
    # p_o = 0.5 = p_e: kappa 0.
    assert cohens_kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]).kappa == pytest.approx(0.0)


def test_missing_labels_are_left_out_and_counted() -> None:
    result = cohens_kappa(["a", None, "b", "a", math.nan], ["a", "b", "b", pd.NA, "a"])
    assert result.n == 2 and result.missing == 3 and result.kappa == pytest.approx(1.0)


def test_undefined_kappa_says_why() -> None:
    same = cohens_kappa(["a", "a", "a"], ["a", "a", "a"])
    assert math.isnan(same.kappa) and same.percent_agreement == 1.0 and same.n == 3
    assert same.skipped == "both raters gave every item the same single label: kappa is 0/0"
    empty = cohens_kappa([], [])
    assert empty.skipped == "no item labelled by both" and empty.n == 0
    assert empty.as_dict()["skipped"] == empty.skipped


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="pair them"):
        cohens_kappa(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="not among"):
        cohens_kappa(["a", "z"], ["a", "a"], labels=["a"])
