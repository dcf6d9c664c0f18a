"""Inferential statistics of the dyad, all at the conversation level.

Welch tests of the manipulation contrast (overall and within each pairing), role-specific OLS
models with HC3 robust errors and joint Wald tests on the pairing terms and the pairing x style
interaction, and Holm-corrected pairwise Welch comparisons of pairings. The contrasts and
comparisons are made within each cell of the factors the run declares beyond the five analysis
levels; the OLS models take those factors as terms.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import OlsFit, finite_or_none, holm, ols_hc3, wald_test, welch_t_test
from backchannel.paradigms.dyad._cells import Cells

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
    """Two-sided Welch t test of mean(first) - mean(second); `skipped` says why not run."""
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    test = welch_t_test(a, b)
    return {
        "n_first": len(a),
        "n_second": len(b),
        "mean_first": finite_or_none(float(a.mean())) if len(a) else None,
        "mean_second": finite_or_none(float(b.mean())) if len(b) else None,
        "difference": finite_or_none(test.estimate),
        "t": finite_or_none(test.statistic),
        "df": finite_or_none(test.df) if test.df is not None else None,
        "p": finite_or_none(test.p_value),
        "n": test.n,
        "skipped": test.skipped,
    }


def manipulation_contrasts(
    data: pd.DataFrame, outcomes: tuple[str, ...] = CONTRAST_OUTCOMES, cells: Cells | None = None
) -> dict[str, Any]:
    """Welch tests of manipulative minus plain conversations, overall and within each pairing
    (rows per cell of `cells`' extra factors)."""
    cells = cells or Cells()

    def contrast(group: pd.DataFrame) -> dict[str, Any]:
        manipulative = group[group["style"] == MANIPULATIVE]
        plain = group[group["style"] == PLAIN]
        return {o: welch(manipulative[o], plain[o]) for o in outcomes}

    return {
        "first": MANIPULATIVE,
        "second": PLAIN,
        "overall": [{**cell, **contrast(g)} for cell, g in cells.overall(data)],
        "by_pairing": [{**cell, **contrast(g)} for cell, g in cells.by_pairing(data)],
    }


def _as_text(values: pd.Series) -> pd.Series:
    """A factor's levels as text for the formula (a null level reads `None`)."""
    return values.map(
        lambda v: "None" if v is None or (isinstance(v, float) and v != v) else str(v)
    )


def _design_frame(data: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    frame = data.copy()
    for factor in factors:
        values = _as_text(frame[factor])
        present = set(values)
        preferred = [level for level in REFERENCE_ORDER.get(factor, []) if level in present]
        levels = preferred + sorted(present - set(preferred))
        frame[factor] = pd.Categorical(values, categories=levels)
    return frame


def _varying(data: pd.DataFrame, factors: list[str]) -> list[str]:
    return [f for f in factors if _as_text(data[f]).nunique() > 1]


def _coefficients(fit: OlsFit) -> list[dict[str, Any]]:
    return [
        {
            "term": c.term,
            "estimate": finite_or_none(c.estimate),
            "se": finite_or_none(c.se),
            "z": finite_or_none(c.z),
            "p": finite_or_none(c.p),
        }
        for c in fit.coefficients
    ]


def formulas(data: pd.DataFrame, outcome: str, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The two model formulas for `outcome`, leaving out factors with a single level.

    `main`: pairing + stance x style + wording. `interaction`: pairing x style + stance + wording.
    Each further declared factor (`extra`, e.g. `rounds`) is one more term of both.
    """
    present = _varying(data, ["pairing", "stance", "style", "wording", *extra])

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

    others = [term(f) for f in extra]
    return {
        "main": joined(term("pairing"), product("stance", "style"), term("wording"), *others),
        "interaction": joined(
            product("pairing", "style"), term("stance"), term("wording"), *others
        ),
    }


PAIRING_TERM = "C(pairing)"
INTERACTION_TERM = "C(pairing):C(style)"


def _wald(fit: OlsFit, term: str, data: pd.DataFrame, needs: list[str]) -> dict[str, Any]:
    """The joint Wald test of one term, or why the design has no such term to test."""
    constant = [f for f in needs if f not in _varying(data, needs)]
    if fit.skipped is None and constant:
        reasons = {"pairing": "only one pairing in the run", "style": "only one style in the run"}
        reason = "; ".join(reasons.get(f, f"only one {f} in the run") for f in constant)
        return {"terms": [], "statistic": None, "df": 0, "p": None, "n": fit.n, "skipped": reason}
    return wald_test(fit, [term]).as_dict()


def ols_models(data: pd.DataFrame, outcome: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Both HC3 OLS models of one outcome with their joint Wald tests; `extra` names further
    declared factors (columns of `data`), each a term of both models.

    A model that cannot be estimated (too few conversations, an empty cell, leverage 1) is
    reported with `skipped` and its reason instead of numbers. The Wald tests select the
    pairing terms by the formula's term metadata, so any character in a model name is safe.
    """
    frame = _design_frame(data, ["pairing", "stance", "style", "wording", *extra])
    out: dict[str, Any] = {}
    for name, formula in formulas(data, outcome, extra).items():
        if len(frame) < 2:
            out[name] = {"formula": formula, "n": len(frame), "skipped": "too few conversations"}
            continue
        fit = ols_hc3(frame, formula)
        if fit.skipped is not None:
            out[name] = {"formula": formula, "n": fit.n, "skipped": fit.skipped}
            continue
        model: dict[str, Any] = {
            "formula": formula,
            "n": fit.n,
            "r_squared": finite_or_none(fit.r_squared),
            "coefficients": _coefficients(fit),
        }
        if name == "main":
            model["pairing_wald"] = _wald(fit, PAIRING_TERM, frame, ["pairing"])
        else:
            model["pairing_x_style_wald"] = _wald(
                fit, INTERACTION_TERM, frame, ["pairing", "style"]
            )
        out[name] = model
    return out


def pairing_comparisons(
    data: pd.DataFrame, outcome: str, cells: Cells | None = None
) -> list[dict[str, Any]]:
    """Welch tests of every pair of pairings on `outcome`, Holm-adjusted within the outcome;
    within each cell of `cells`' extra factors (its levels lead each row)."""
    rows: list[dict[str, Any]] = []
    for cell, within in (cells or Cells()).overall(data):
        groups = {str(p): g[outcome] for p, g in within.groupby("pairing", sort=True)}
        found = [
            {**cell, "first": a, "second": b, **welch(groups[a], groups[b])}
            for a, b in itertools.combinations(sorted(groups), 2)
        ]
        for row, adjusted in zip(found, holm([row["p"] for row in found]), strict=True):
            row["p_holm"] = adjusted
        rows += found
    return rows


def inference(
    data: pd.DataFrame, outcomes: tuple[str, ...] = TEST_OUTCOMES, cells: Cells | None = None
) -> dict[str, Any]:
    """All tests on the analysable conversations."""
    extra = tuple((cells or Cells()).extra)
    return {
        "manipulation": manipulation_contrasts(data, cells=cells),
        "models": {o: ols_models(data, o, extra) for o in outcomes},
        "pairing_comparisons": {o: pairing_comparisons(data, o, cells) for o in outcomes},
    }
