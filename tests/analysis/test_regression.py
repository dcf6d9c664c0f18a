"""HC3 OLS and joint Wald tests against statsmodels on explicit design matrices."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from backchannel.analysis import ols_hc3, wald_test
from backchannel.analysis._regression import unfit_reason

# Level names that break any search of column names for ":" or "[".
LEVELS = ["openai/llama3.1:8b", "local/my model's.gguf", 'x[T."q":7b]']


def _data(seed: int = 3, reps: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"g": g, "s": s} for g in LEVELS for s in ("plain", "loud") for _ in range(reps)]
    frame = pd.DataFrame(rows)
    frame["y"] = rng.normal(size=len(frame)) + (frame["g"] == LEVELS[1]) * 0.8
    frame["g"] = pd.Categorical(frame["g"], categories=LEVELS)
    frame["s"] = pd.Categorical(frame["s"], categories=["plain", "loud"])
    return frame


def _reference(frame: pd.DataFrame) -> sm.regression.linear_model.RegressionResultsWrapper:
    g1 = (frame["g"] == LEVELS[1]).astype(float)
    g2 = (frame["g"] == LEVELS[2]).astype(float)
    loud = (frame["s"] == "loud").astype(float)
    X = pd.DataFrame(
        {"const": 1.0, "g1": g1, "g2": g2, "loud": loud, "g1:loud": g1 * loud, "g2:loud": g2 * loud}
    )
    return sm.OLS(frame["y"], X).fit(cov_type="HC3")


def test_fit_matches_statsmodels_on_an_explicit_matrix() -> None:
    frame = _data()
    fit = ols_hc3(frame, "y ~ C(g) * C(s)")
    ref = _reference(frame)
    assert fit.skipped is None and fit.n == len(frame)
    assert [c.estimate for c in fit.coefficients] == pytest.approx(list(ref.params), rel=1e-9)
    assert [c.se for c in fit.coefficients] == pytest.approx(list(ref.bse), rel=1e-9)
    assert [c.p for c in fit.coefficients] == pytest.approx(list(ref.pvalues), rel=1e-9)
    assert fit.r_squared == pytest.approx(ref.rsquared, rel=1e-9)
    assert fit.terms == {"Intercept": (0,), "C(g)": (1, 2), "C(s)": (3,), "C(g):C(s)": (4, 5)}


@pytest.mark.parametrize(
    ("term", "columns"), [("C(g)", ["g1", "g2"]), ("C(g):C(s)", ["g1:loud", "g2:loud"])]
)
def test_wald_is_b_v_inverse_b_with_hc3_covariance(term: str, columns: list[str]) -> None:
    frame = _data()
    result = wald_test(ols_hc3(frame, "y ~ C(g) * C(s)"), [term])
    ref = _reference(frame)
    b = ref.params[columns].to_numpy()
    V = ref.cov_params().loc[columns, columns].to_numpy()
    chi2 = float(b @ np.linalg.solve(V, b))
    assert result.skipped is None and result.df == 2 and result.n == len(frame)
    assert result.statistic == pytest.approx(chi2, rel=1e-9)
    assert result.p_value == pytest.approx(stats.chi2.sf(chi2, 2), rel=1e-9)
    assert len(result.columns) == 2 and all(term.split(":")[0] in c for c in result.columns)


def test_wald_of_two_terms_together() -> None:
    frame = _data()
    result = wald_test(ols_hc3(frame, "y ~ C(g) * C(s)"), ["C(g)", "C(s)"])
    assert result.df == 3


def test_rows_with_missing_values_are_dropped_by_the_formula() -> None:
    frame = _data()
    frame.loc[0, "y"] = math.nan
    fit = ols_hc3(frame, "y ~ C(g) * C(s)")
    assert fit.n == len(frame) - 1
    ref = _reference(frame.drop(index=0))
    assert fit.coefficients[1].estimate == pytest.approx(ref.params["g1"], rel=1e-9)


def test_what_cannot_be_fitted_or_tested_says_why() -> None:
    frame = _data(reps=1)  # six units for six parameters
    fit = ols_hc3(frame, "y ~ C(g) * C(s)")
    assert fit.skipped == "6 units for 6 parameters" and not fit.coefficients
    wald = wald_test(fit, ["C(g)"])
    assert wald.skipped == "model skipped: 6 units for 6 parameters"
    assert wald.as_dict() == {
        "terms": [],
        "statistic": None,
        "df": 0,
        "p": None,
        "n": 6,
        "skipped": "model skipped: 6 units for 6 parameters",
    }
    assert ols_hc3(frame.iloc[:1], "y ~ 1").skipped == "fewer than two units"
    missing = wald_test(ols_hc3(_data(), "y ~ C(s)"), ["C(g)"])
    assert missing.skipped == "the model has no term C(g)"


def test_unfit_reasons() -> None:
    ones = np.ones((4, 1))
    assert unfit_reason(ones) is None
    collinear = np.column_stack([ones, 2 * ones[:, 0], [0, 1, 0, 1]])
    assert unfit_reason(collinear) == "rank-deficient design (a factor combination has no units)"
    lever = np.column_stack([ones, [1.0, 0, 0, 0]])
    assert unfit_reason(lever) == "a unit has leverage 1, so HC3 errors are undefined"
