"""Every dyad statistic against scipy / statsmodels (and a hand computation) on the same data."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

from backchannel.paradigms.dyad import (
    dyad_metrics,
    manipulation_contrasts,
    ols_models,
    pairing_comparisons,
    welch,
)

from ._build import tables
from .test_metrics import hand_run

PAIRINGS = ("a vs a", "a vs b", "b vs a")


def design(pairings: tuple[str, ...] = PAIRINGS, reps: int = 3, seed: int = 7) -> pd.DataFrame:
    """A full factorial of conversations with random integer outcomes."""
    rng = np.random.default_rng(seed)
    rows = [
        {"pairing": p, "stance": s, "style": y, "wording": w}
        for p, s, y, w, _ in itertools.product(
            pairings,
            ("human", "neutral", "natural"),
            ("manipulative", "plain"),
            ("first", "opposite"),
            range(reps),
        )
    ]
    frame = pd.DataFrame(rows)
    n = len(frame)
    frame["shift_discussant"] = rng.integers(-3, 4, n).astype(float)
    frame["shift_opponent"] = rng.integers(-3, 4, n) + (frame["style"] == "manipulative") * 1.0
    frame["gap_change"] = rng.integers(-4, 5, n).astype(float)
    frame["abs_shift_discussant"] = frame["shift_discussant"].abs()
    frame["abs_shift_opponent"] = frame["shift_opponent"].abs()
    return frame


def test_welch_by_hand_and_against_scipy() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0, 10.0]
    # means 2.5 and 6; variances 5/3 and 10; se^2 = (5/3)/4 + 10/5 = 29/12
    # t = -3.5 / sqrt(29/12); df = (29/12)^2 / ((5/12)^2 / 3 + 2^2 / 4)
    se2 = 29 / 12
    df = se2**2 / ((5 / 12) ** 2 / 3 + 1)
    result = welch(a, b)
    assert result["difference"] == pytest.approx(-3.5)
    assert result["t"] == pytest.approx(-3.5 / np.sqrt(se2))
    assert result["df"] == pytest.approx(df)
    assert result["p"] == pytest.approx(2 * stats.t.sf(3.5 / np.sqrt(se2), df))
    reference = stats.ttest_ind(a, b, equal_var=False)
    assert result["t"] == pytest.approx(reference.statistic)
    assert result["p"] == pytest.approx(reference.pvalue)


def test_welch_needs_two_per_group() -> None:
    result = welch([1.0], [2.0, 3.0])
    assert result["difference"] == pytest.approx(-1.5)
    assert result["t"] is None and result["p"] is None


def test_manipulation_contrasts_match_scipy() -> None:
    data = design()
    result = manipulation_contrasts(data)
    (overall,) = result["overall"]
    for outcome in ("shift_opponent", "gap_change", "abs_shift_discussant"):
        m = data.loc[data["style"] == "manipulative", outcome]
        p = data.loc[data["style"] == "plain", outcome]
        reference = stats.ttest_ind(m, p, equal_var=False)
        assert overall[outcome]["t"] == pytest.approx(reference.statistic)
        assert overall[outcome]["p"] == pytest.approx(reference.pvalue)
        assert overall[outcome]["n_first"] == len(m)
    within = data[data["pairing"] == "a vs b"]
    m = within.loc[within["style"] == "manipulative", "shift_opponent"]
    p = within.loc[within["style"] == "plain", "shift_opponent"]
    reference = stats.ttest_ind(m, p, equal_var=False)
    by_pairing = {row["pairing"]: row for row in result["by_pairing"]}
    assert list(by_pairing) == list(PAIRINGS)
    assert by_pairing["a vs b"]["shift_opponent"]["p"] == pytest.approx(reference.pvalue)


def dummies(data: pd.DataFrame, factor: str, reference: str) -> pd.DataFrame:
    levels = sorted(set(data[factor]) - {reference})
    return pd.DataFrame({f"{factor}={lv}": (data[factor] == lv) * 1.0 for lv in levels})


def test_main_model_and_pairing_wald_match_statsmodels() -> None:
    data = design()
    result = ols_models(data, "shift_opponent")["main"]
    # Independent design matrix: intercept, pairing, stance x style, wording (neutral, plain,
    # first and "a vs a" are the reference levels).
    pairing = dummies(data, "pairing", "a vs a")
    stance = dummies(data, "stance", "neutral")
    manip = dummies(data, "style", "plain")["style=manipulative"]
    X = pd.concat(
        [
            pd.Series(1.0, index=data.index, name="const"),
            pairing,
            stance,
            manip,
            stance.mul(manip, axis=0).add_suffix(":manip"),
            dummies(data, "wording", "first"),
        ],
        axis=1,
    )
    reference = sm.OLS(data["shift_opponent"], X).fit(cov_type="HC3")
    estimates = {c["term"]: c for c in result["coefficients"]}
    assert estimates["C(pairing)[T.b vs a]"]["estimate"] == pytest.approx(
        reference.params["pairing=b vs a"]
    )
    assert estimates["C(pairing)[T.b vs a]"]["se"] == pytest.approx(reference.bse["pairing=b vs a"])
    key = "C(stance)[T.natural]:C(style)[T.manipulative]"
    assert estimates[key]["estimate"] == pytest.approx(reference.params["stance=natural:manip"])
    assert estimates[key]["p"] == pytest.approx(reference.pvalues["stance=natural:manip"])
    assert result["r_squared"] == pytest.approx(reference.rsquared)
    # Joint Wald: b' V^-1 b over the two pairing coefficients with the HC3 covariance.
    names = ["pairing=a vs b", "pairing=b vs a"]
    b = reference.params[names].to_numpy()
    V = reference.cov_params().loc[names, names].to_numpy()
    chi2 = float(b @ np.linalg.solve(V, b))
    wald = result["pairing_wald"]
    assert wald["df"] == 2
    assert wald["statistic"] == pytest.approx(chi2)
    assert wald["p"] == pytest.approx(stats.chi2.sf(chi2, 2))


def test_interaction_model_wald_matches_statsmodels() -> None:
    data = design()
    result = ols_models(data, "shift_discussant")["interaction"]
    pairing = dummies(data, "pairing", "a vs a")
    manip = dummies(data, "style", "plain")["style=manipulative"]
    X = pd.concat(
        [
            pd.Series(1.0, index=data.index, name="const"),
            pairing,
            manip,
            pairing.mul(manip, axis=0).add_suffix(":manip"),
            dummies(data, "stance", "neutral"),
            dummies(data, "wording", "first"),
        ],
        axis=1,
    )
    reference = sm.OLS(data["shift_discussant"], X).fit(cov_type="HC3")
    names = ["pairing=a vs b:manip", "pairing=b vs a:manip"]
    b = reference.params[names].to_numpy()
    V = reference.cov_params().loc[names, names].to_numpy()
    chi2 = float(b @ np.linalg.solve(V, b))
    wald = result["pairing_x_style_wald"]
    assert wald["terms"] == [
        "C(pairing)[T.a vs b]:C(style)[T.manipulative]",
        "C(pairing)[T.b vs a]:C(style)[T.manipulative]",
    ]
    assert wald["statistic"] == pytest.approx(chi2)
    assert wald["p"] == pytest.approx(stats.chi2.sf(chi2, 2))


def test_models_leave_out_constant_factors() -> None:
    data = design(pairings=("a vs a",))
    result = ols_models(data, "gap_change")
    assert "pairing" not in result["main"]["formula"]
    assert result["main"]["pairing_wald"] == {
        "terms": [],
        "statistic": None,
        "df": 0,
        "p": None,
        "n": len(data),
        "skipped": "only one pairing in the run",
    }


def test_saturated_design_is_skipped_with_a_reason() -> None:
    models = dyad_metrics(tables(hand_run())).tests.models["shift_discussant"]
    assert models.main.skipped is not None and "parameters" in models.main.skipped
    assert models.main.coefficients is None
    assert "coefficients" not in models.main.model_dump()


def test_pairing_comparisons_holm_matches_statsmodels() -> None:
    data = design()
    rows = pairing_comparisons(data, "gap_change")
    assert [(r["first"], r["second"]) for r in rows] == list(itertools.combinations(PAIRINGS, 2))
    raw = []
    for row in rows:
        a = data.loc[data["pairing"] == row["first"], "gap_change"]
        b = data.loc[data["pairing"] == row["second"], "gap_change"]
        raw.append(stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert [r["p"] for r in rows] == pytest.approx(raw)
    assert [r["p_holm"] for r in rows] == pytest.approx(multipletests(raw, method="holm")[1])
    # Holm by hand: sorted p times (3, 2, 1), made monotone and capped at 1
    order = np.argsort(raw)
    adjusted = np.empty(3)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, raw[i] * (3 - rank)))
        adjusted[i] = running
    assert [r["p_holm"] for r in rows] == pytest.approx(adjusted)


# Model names as Ollama, OpenAI-compatible servers and local files spell them: a colon, a
# slash, a space and a quote inside the pairing's level names.
AWKWARD_PAIRINGS = (
    "openai/llama3.1:8b vs openai/llama3.1:8b",
    "openai/llama3.1:8b vs local/my model's.gguf",
    'local/my model\'s.gguf vs openai/"qwen2.5":7b',
)


@pytest.mark.parametrize("model", ["main", "interaction"])
def test_wald_tests_survive_any_character_in_model_names(model: str) -> None:
    # The same data with safe level names gives the reference; renaming levels in the same
    # order must not change a single number of either joint test.
    safe = design()
    awkward = safe.assign(
        pairing=safe["pairing"].map(dict(zip(PAIRINGS, AWKWARD_PAIRINGS, strict=True)))
    )
    key = "pairing_wald" if model == "main" else "pairing_x_style_wald"
    reference = ols_models(safe, "shift_opponent")[model][key]
    result = ols_models(awkward, "shift_opponent")[model][key]
    assert result.get("skipped") is None
    assert result["df"] == reference["df"] == 2
    assert len(result["terms"]) == 2
    assert result["statistic"] == pytest.approx(reference["statistic"], rel=1e-9)
    assert result["p"] == pytest.approx(reference["p"], rel=1e-9)
