"""OLS with HC3 robust errors and joint Wald tests on named model terms (statsmodels).

Terms are found through the formula's own term metadata (patsy's design info), never by
searching column names: a factor level may contain any character, including ":" and "[".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf


@dataclass(frozen=True)
class Coefficient:
    """One column of the design: estimate, HC3 standard error, z statistic and p-value."""

    term: str
    estimate: float
    se: float
    z: float
    p: float


@dataclass(frozen=True)
class OlsFit:
    """An OLS fit with HC3 covariance, or why it could not be estimated (`skipped`).

    `terms` maps each formula term (e.g. "C(pairing)", "C(pairing):C(style)") to the
    positions of its design columns, from the formula's metadata.
    """

    formula: str
    n: int
    r_squared: float = math.nan
    coefficients: tuple[Coefficient, ...] = ()
    terms: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    skipped: str | None = None
    result: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class WaldResult:
    """Chi-square Wald test that every coefficient of the named terms is zero."""

    terms: tuple[str, ...]
    columns: tuple[str, ...]
    statistic: float
    df: int
    p_value: float
    n: int
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "terms": list(self.columns),
            "statistic": None if math.isnan(self.statistic) else self.statistic,
            "df": self.df,
            "p": None if math.isnan(self.p_value) else self.p_value,
            "n": self.n,
            "skipped": self.skipped,
        }


def unfit_reason(exog: np.ndarray) -> str | None:
    """Why HC3 OLS cannot be fitted on this design matrix, or None if it can.

    HC3 divides each residual by 1 - h_ii (MacKinnon & White 1985), so a unit with leverage 1
    makes the errors undefined.
    """
    n, k = exog.shape
    if n <= k:
        return f"{n} units for {k} parameters"
    if np.linalg.matrix_rank(exog) < k:
        return "rank-deficient design (a factor combination has no units)"
    leverage = np.einsum("ij,ji->i", exog, np.linalg.pinv(exog))
    if np.any(leverage > 1 - 1e-9):
        return "a unit has leverage 1, so HC3 errors are undefined"
    return None


def _term_columns(model_spec: Any, width: int) -> dict[str, tuple[int, ...]]:
    """Formula term name -> positions of its design columns, from patsy's or formulaic's spec."""
    if hasattr(model_spec, "term_name_slices"):  # patsy DesignInfo
        slices: dict[Any, slice] = dict(model_spec.term_name_slices)
    else:  # formulaic ModelSpec
        slices = {str(term): columns for term, columns in model_spec.term_slices.items()}
    positions = range(width)
    return {str(name): tuple(positions[columns]) for name, columns in slices.items()}


def ols_hc3(data: pd.DataFrame, formula: str) -> OlsFit:
    """Ordinary least squares of a formula with HC3 heteroskedasticity-robust errors.

    statsmodels.formula.api.ols(...).fit(cov_type="HC3") (Long & Ervin 2000). Rows with a
    missing value in a model variable are dropped by the formula (n counts the rows used). A
    design that cannot be estimated (too few units, an empty factor combination, leverage 1)
    is returned with `skipped` and its reason instead of numbers.
    """
    if len(data) < 2:
        return OlsFit(formula, len(data), skipped="fewer than two units")
    spec = smf.ols(formula, data=data)
    exog = np.asarray(spec.exog, dtype=float)
    terms = _term_columns(spec.data.model_spec, exog.shape[1])
    reason = unfit_reason(exog)
    if reason is not None:
        return OlsFit(formula, len(exog), terms=terms, skipped=reason)
    result = spec.fit(cov_type="HC3")
    coefficients = tuple(
        Coefficient(
            str(name),
            float(result.params.iloc[i]),
            float(result.bse.iloc[i]),
            float(result.tvalues.iloc[i]),
            float(result.pvalues.iloc[i]),
        )
        for i, name in enumerate(spec.exog_names)
    )
    return OlsFit(
        formula,
        int(result.nobs),
        float(result.rsquared),
        coefficients,
        terms,
        None,
        result,
    )


def wald_test(fit: OlsFit, terms: Sequence[str]) -> WaldResult:
    """Joint chi-square Wald test that every coefficient of `terms` is zero, with the fit's
    HC3 covariance: statsmodels' wald_test(R, use_f=False), R selecting the terms' columns.

    Skipped when the model was, or when none of the terms is in it (e.g. a factor with one
    level, left out of the formula).
    """
    names = tuple(terms)
    if fit.skipped is not None:
        return WaldResult(names, (), math.nan, 0, math.nan, fit.n, f"model skipped: {fit.skipped}")
    unknown = [t for t in names if t not in fit.terms]
    if unknown:
        return WaldResult(
            names,
            (),
            math.nan,
            0,
            math.nan,
            fit.n,
            f"the model has no term {', '.join(unknown)}",
        )
    all_columns = [c.term for c in fit.coefficients]
    positions = [position for t in names for position in fit.terms[t]]
    restriction = np.zeros((len(positions), len(all_columns)))
    for row, position in enumerate(positions):
        restriction[row, position] = 1.0
    test = fit.result.wald_test(restriction, scalar=True, use_f=False)
    return WaldResult(
        names,
        tuple(all_columns[p] for p in positions),
        float(test.statistic),
        len(positions),
        float(test.pvalue),
        fit.n,
    )
