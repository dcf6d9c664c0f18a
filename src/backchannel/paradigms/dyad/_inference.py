"""Inferential statistics of the dyad, all at the conversation level.

Welch tests of the manipulation contrast (overall and within each pairing), role-specific OLS
models with HC3 robust errors and joint Wald tests on the pairing terms and the pairing x style
interaction, and Holm-corrected pairwise Welch comparisons of pairings.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.multitest import multipletests

from backchannel.analysis import finite_or_none

TEST_OUTCOMES = ("shift_discussant", "shift_opponent", "gap_change")
CONTRAST_OUTCOMES = (
    "shift_discussant",
    "abs_shift_discussant",
    "shift_opponent",
    "abs_shift_opponent",
    "gap_change",
)
MANIPULATIVE, PLAIN = "manipulative", "plain"
# Reference (first) levels of the regression factors; levels not listed follow in sorted order.
REFERENCE_ORDER = {
    "stance": ["neutral", "human", "natural"],
    "style": [PLAIN, MANIPULATIVE],
    "wording": ["first", "opposite"],
}


def welch(first: pd.Series | np.ndarray, second: pd.Series | np.ndarray) -> dict[str, Any]:
    """Two-sided Welch t test of mean(first) - mean(second); None where undefined."""
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    result: dict[str, Any] = {
        "n_first": len(a),
        "n_second": len(b),
        "mean_first": finite_or_none(float(a.mean())) if len(a) else None,
        "mean_second": finite_or_none(float(b.mean())) if len(b) else None,
        "difference": None,
        "t": None,
        "df": None,
        "p": None,
    }
    if len(a) and len(b):
        result["difference"] = finite_or_none(float(a.mean() - b.mean()))
    if len(a) < 2 or len(b) < 2:
        return result
    test = stats.ttest_ind(a, b, equal_var=False)
    result["t"] = finite_or_none(float(test.statistic))
    result["df"] = finite_or_none(float(test.df))
    result["p"] = finite_or_none(float(test.pvalue))
    return result


def manipulation_contrasts(
    data: pd.DataFrame, outcomes: tuple[str, ...] = CONTRAST_OUTCOMES
) -> dict[str, Any]:
    """Welch tests of manipulative minus plain conversations, overall and within each pairing."""

    def contrast(group: pd.DataFrame) -> dict[str, Any]:
        manipulative = group[group["style"] == MANIPULATIVE]
        plain = group[group["style"] == PLAIN]
        return {o: welch(manipulative[o], plain[o]) for o in outcomes}

    return {
        "first": MANIPULATIVE,
        "second": PLAIN,
        "overall": contrast(data),
        "by_pairing": {str(p): contrast(g) for p, g in data.groupby("pairing", sort=True)},
    }


def _design_frame(data: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    frame = data.copy()
    for factor in factors:
        values = frame[factor].astype(str)
        present = set(values)
        preferred = [level for level in REFERENCE_ORDER.get(factor, []) if level in present]
        levels = preferred + sorted(present - set(preferred))
        frame[factor] = pd.Categorical(values, categories=levels)
    return frame


def _varying(data: pd.DataFrame, factors: list[str]) -> list[str]:
    return [f for f in factors if data[f].astype(str).nunique() > 1]


def _joint_wald(result: Any, terms: list[str]) -> dict[str, Any]:
    """Chi-square Wald test that all `terms` are zero, with the fit's (HC3) covariance."""
    if not terms:
        return {"terms": [], "statistic": None, "df": 0, "p": None}
    names = list(result.params.index)
    restriction = np.zeros((len(terms), len(names)))
    for row, term in enumerate(terms):
        restriction[row, names.index(term)] = 1.0
    test = result.wald_test(restriction, scalar=True, use_f=False)
    return {
        "terms": terms,
        "statistic": finite_or_none(float(test.statistic)),
        "df": len(terms),
        "p": finite_or_none(float(test.pvalue)),
    }


def _coefficients(result: Any) -> list[dict[str, Any]]:
    return [
        {
            "term": str(term),
            "estimate": finite_or_none(float(result.params[term])),
            "se": finite_or_none(float(result.bse[term])),
            "z": finite_or_none(float(result.tvalues[term])),
            "p": finite_or_none(float(result.pvalues[term])),
        }
        for term in result.params.index
    ]


def formulas(data: pd.DataFrame, outcome: str) -> dict[str, str]:
    """The two model formulas for `outcome`, leaving out factors with a single level.

    `main`: pairing + stance x style + wording. `interaction`: pairing x style + stance + wording.
    """
    present = _varying(data, ["pairing", "stance", "style", "wording"])

    def term(factor: str) -> str | None:
        return f"C({factor})" if factor in present else None

    def joined(*parts: str | None) -> str:
        kept = [p for p in parts if p]
        return f"{outcome} ~ " + (" + ".join(kept) if kept else "1")

    def product(a: str, b: str) -> str | None:
        ta, tb = term(a), term(b)
        if ta and tb:
            return f"{ta} * {tb}"
        return ta or tb

    return {
        "main": joined(term("pairing"), product("stance", "style"), term("wording")),
        "interaction": joined(product("pairing", "style"), term("stance"), term("wording")),
    }


def _unfit_reason(exog: np.ndarray) -> str | None:
    """Why HC3 OLS cannot be fitted on this design matrix, or None if it can."""
    n, k = exog.shape
    if n <= k:
        return f"{n} conversations for {k} parameters"
    if np.linalg.matrix_rank(exog) < k:
        return "rank-deficient design (a factor combination has no conversations)"
    leverage = np.einsum("ij,ji->i", exog, np.linalg.pinv(exog))
    if np.any(leverage > 1 - 1e-9):
        return "a conversation has leverage 1, so HC3 errors are undefined"
    return None


def ols_models(data: pd.DataFrame, outcome: str) -> dict[str, Any]:
    """Both HC3 OLS models of one outcome with their joint Wald tests.

    A model that cannot be estimated (too few conversations, an empty cell, leverage 1) is
    reported with `skipped` and its reason instead of numbers.
    """
    frame = _design_frame(data, ["pairing", "stance", "style", "wording"])
    out: dict[str, Any] = {}
    for name, formula in formulas(data, outcome).items():
        if len(frame) < 2:
            out[name] = {"formula": formula, "n": len(frame), "skipped": "too few conversations"}
            continue
        spec = smf.ols(formula, data=frame)
        reason = _unfit_reason(np.asarray(spec.exog, dtype=float))
        if reason is not None:
            out[name] = {"formula": formula, "n": len(frame), "skipped": reason}
            continue
        result = spec.fit(cov_type="HC3")
        params = [str(t) for t in result.params.index]
        pairing_terms = [t for t in params if t.startswith("C(pairing)") and ":" not in t]
        interaction_terms = [t for t in params if t.startswith("C(pairing)") and ":C(style)" in t]
        model: dict[str, Any] = {
            "formula": formula,
            "n": int(result.nobs),
            "r_squared": finite_or_none(float(result.rsquared)),
            "coefficients": _coefficients(result),
        }
        if name == "main":
            model["pairing_wald"] = _joint_wald(result, pairing_terms)
        else:
            model["pairing_x_style_wald"] = _joint_wald(result, interaction_terms)
        out[name] = model
    return out


def pairing_comparisons(data: pd.DataFrame, outcome: str) -> list[dict[str, Any]]:
    """Welch tests of every pair of pairings on `outcome`, Holm-adjusted within the outcome."""
    groups = {str(p): g[outcome] for p, g in data.groupby("pairing", sort=True)}
    rows = [
        {"first": a, "second": b, **welch(groups[a], groups[b])}
        for a, b in itertools.combinations(sorted(groups), 2)
    ]
    tested = [i for i, row in enumerate(rows) if row["p"] is not None]
    for row in rows:
        row["p_holm"] = None
    if tested:
        _, adjusted, _, _ = multipletests([rows[i]["p"] for i in tested], method="holm")
        for i, p in zip(tested, adjusted, strict=True):
            rows[i]["p_holm"] = float(p)
    return rows


def inference(data: pd.DataFrame, outcomes: tuple[str, ...] = TEST_OUTCOMES) -> dict[str, Any]:
    """All tests on the analysable conversations."""
    return {
        "manipulation": manipulation_contrasts(data),
        "models": {o: ols_models(data, o) for o in outcomes},
        "pairing_comparisons": {o: pairing_comparisons(data, o) for o in outcomes},
    }
