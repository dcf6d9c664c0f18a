"""The Friedkin-Johnsen fit on hand-built trajectories whose estimates were worked out by hand,
and against scipy's and statsmodels' own least squares on the same transitions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.optimize import lsq_linear

from backchannel.analysis import OPINION_COLUMNS, Influence, Metrics, fit_influence
from backchannel.analysis._influence import (
    _resample_counts,
    box_fits,
    fit_products,
    products,
    transitions,
)

NAN = float("nan")


def _frame(rows: list[tuple[str, str, str, int, float, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(OPINION_COLUMNS))


def _trajectory(
    cid: str, agent: str, private: list[float], neighbours: list[float], model: str = "m"
) -> list[tuple[str, str, str, int, float, float, float, float]]:
    """One agent whose public opinions and neighbours equal its private ones."""
    return [
        (cid, agent, model, t, x, x, m, m)
        for t, (x, m) in enumerate(zip(private, neighbours, strict=True))
    ]


# Two conversations, one agent each. Transitions (m - x(t-1), x(0) - x(t-1), x(t) - x(t-1)):
# c1: (1, 0, 1), (-1, -1, 0); c2: (-1, 0, 0), (-1, 0, -1). Cross products G = [[4, 1], [1, 1]],
# c = [2, 0]: the unbounded solution (a, s) = (2/3, -2/3) breaks s >= 0, so s = 0 and
# a = 2 / 4 = 0.5 (the gradient in s at (0.5, 0) is a = 0.5 > 0: the bound holds). Residuals
# 0.5, 0.5, 0.5, -0.5: SSE 1. With a = 0 the best s is 0: SSE = 1 + 0 + 0 + 1 = 2.
HAND = _frame(
    _trajectory("c1", "A", [0, 1, 1], [NAN, 1, 0]) + _trajectory("c2", "B", [1, 1, 0], [NAN, 0, 0])
)


def _row(influence: Influence, channel: str = "private", model: str = "m") -> object:
    (row,) = [r for r in influence.rows if r.channel == channel and r.agent_model == model]
    return row


def test_the_hand_worked_fit() -> None:
    influence = fit_influence(HAND, {}, (), resamples=200, seed=3)
    row = _row(influence)
    assert row.susceptibility.estimate == pytest.approx(0.5)
    assert row.stubbornness.estimate == pytest.approx(0.0, abs=1e-12)
    assert row.inertia == pytest.approx(0.5)
    assert row.rmse == pytest.approx(0.5)
    assert row.baseline_rmse == pytest.approx(math.sqrt(0.5))
    assert row.error_reduction.estimate == pytest.approx(0.5)
    assert (row.conversations, row.agents, row.transitions, row.missing) == (2, 2, 4, 0)
    assert row.susceptibility.low <= 0.5 <= row.susceptibility.high
    # The public channel holds the same numbers here, fitted on its own columns.
    assert _row(influence, "public").susceptibility.estimate == pytest.approx(0.5)
    assert influence.form.startswith("x(t) = a")


def test_the_fit_is_scipys_bounded_least_squares_on_the_transitions() -> None:
    data = transitions(HAND, "private")
    design = np.column_stack(
        [data["neighbours"] - data["previous"], data["initial"] - data["previous"]]
    )
    change = (data["y"] - data["previous"]).to_numpy()
    direct = lsq_linear(design, change, bounds=([0, 0], [1, 1])).x
    row = _row(fit_influence(HAND, {}, (), resamples=10))
    assert row.susceptibility.estimate == pytest.approx(direct[0], abs=1e-9)
    assert row.stubbornness.estimate == pytest.approx(direct[1], abs=1e-9)


def _planted(a: float, s: float, conversations: int, noise: float, seed: int) -> pd.DataFrame:
    """Trajectories of x(t) = a m + s x(0) + (1 - a - s) x(t-1) + noise, neighbours drawn."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(conversations):
        for agent in ("A", "B"):
            x0 = float(rng.uniform(0, 6))
            xs, ms = [x0], [NAN]
            for _ in range(6):
                m = float(rng.uniform(0, 6))
                xs.append(a * m + s * x0 + (1 - a - s) * xs[-1] + noise * rng.normal())
                ms.append(m)
            rows += _trajectory(f"c{c}", agent, xs, ms)
    return _frame(rows)


def test_interior_estimates_equal_statsmodels_ols() -> None:
    frame = _planted(0.3, 0.2, 30, noise=0.3, seed=1)
    data = transitions(frame, "private")
    regressors = np.column_stack(
        [data["neighbours"] - data["previous"], data["initial"] - data["previous"]]
    )
    ols = sm.OLS((data["y"] - data["previous"]).to_numpy(), regressors).fit()
    row = _row(fit_influence(frame, {}, (), resamples=300, seed=2))
    assert row.susceptibility.estimate == pytest.approx(ols.params[0], abs=1e-9)
    assert row.stubbornness.estimate == pytest.approx(ols.params[1], abs=1e-9)
    assert row.rmse == pytest.approx(math.sqrt(ols.ssr / ols.nobs), abs=1e-9)
    # The planted weights lie inside the bootstrap intervals, which are near OLS's own.
    assert row.susceptibility.low <= 0.3 <= row.susceptibility.high
    assert row.stubbornness.low <= 0.2 <= row.stubbornness.high
    low, high = ols.conf_int()[0]
    assert abs(row.susceptibility.low - low) < 0.05 and abs(row.susceptibility.high - high) < 0.05
    assert row.error_reduction.estimate > 0.5


def test_noise_free_trajectories_are_fitted_exactly_and_the_seed_fixes_the_intervals() -> None:
    frame = _planted(0.4, 0.1, 5, noise=0.0, seed=4)
    row = _row(fit_influence(frame, {}, (), resamples=50, seed=9))
    assert row.susceptibility.estimate == pytest.approx(0.4)
    assert (row.susceptibility.low, row.susceptibility.high) == pytest.approx((0.4, 0.4))
    assert row.rmse == pytest.approx(0.0, abs=1e-6)  # the SSE from cross products: rounding
    assert row.error_reduction.estimate == pytest.approx(1.0)
    noisy = _planted(0.4, 0.1, 8, noise=0.5, seed=4)
    first = fit_influence(noisy, {}, (), resamples=50, seed=9)
    assert first == fit_influence(noisy, {}, (), resamples=50, seed=9)
    assert first != fit_influence(noisy, {}, (), resamples=50, seed=10)


def test_groups_by_cell_and_model_and_counts_missing_values() -> None:
    rows = _trajectory("c1", "A", [0, 1, 1], [NAN, 1, 0], "x") + _trajectory(
        "c2", "B", [1, NAN, 0], [NAN, 0, 0], "x"
    )
    rows += _trajectory("c3", "C", [0, 1, 1], [NAN, 1, 0], "y")
    frame = _frame(rows)
    levels = {"c1": {"k": 1}, "c2": {"k": 1}, "c3": {"k": 2}}
    influence = fit_influence(frame, levels, ("k",), resamples=10)
    x = _row(influence, model="x")
    # c2's missing round 1 removes both of its transitions (each needs round 1).
    assert (x.transitions, x.missing, x.cell) == (2, 2, {"k": 1})
    assert x.skipped is not None and "2 conversations" in x.skipped
    assert x.susceptibility.estimate is None and x.susceptibility.skipped == x.skipped
    y = _row(influence, model="y")
    assert y.cell == {"k": 2} and y.skipped is not None


def test_an_unseparable_design_is_skipped_with_its_reason() -> None:
    # The neighbours always hold the agent's initial opinion: m - x(t-1) = x(0) - x(t-1).
    frame = _frame(
        _trajectory("c1", "A", [0, 1, 0], [NAN, 0, 0])
        + _trajectory("c2", "B", [1, 0, 1], [NAN, 1, 1])
    )
    row = _row(fit_influence(frame, {}, (), resamples=10))
    assert row.skipped is not None and "cannot be told apart" in row.skipped
    assert row.rmse is None


def test_a_frame_without_the_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="lacks the columns"):
        fit_influence(HAND.drop(columns=["neighbours_public"]), {}, ())


def test_metrics_carry_the_fit_only_when_there_is_one() -> None:
    class Plain(Metrics):
        pass

    assert "influence" not in Plain().as_json()
    fitted = Plain(influence=fit_influence(HAND, {}, (), resamples=10))
    data = fitted.as_json()
    assert data["influence"]["rows"][0]["susceptibility"]["estimate"] == pytest.approx(0.5)
    assert "influence.rows" in fitted.frames()


def test_the_bootstraps_box_solver_is_lsq_linear() -> None:
    # Random problems, many with a bound binding (targets outside the box), one at a time
    # through scipy and all at once through the closed form.
    rng = np.random.default_rng(0)
    stack = []
    for _ in range(200):
        x = rng.normal(size=(12, 2))
        y = x @ rng.uniform(-1, 2, size=2) + rng.normal(scale=0.5, size=12)
        stack.append(products(y, np.zeros(12), x[:, 1], x[:, 0]))
    cross = np.stack(stack)
    a, s, sse, base = box_fits(cross)
    for i, c in enumerate(cross):
        expected = fit_products(c)
        assert (a[i], s[i], sse[i], base[i]) == pytest.approx(expected, abs=1e-7)
    assert ((a == 0) | (a == 1) | (s == 0) | (s == 1)).sum() > 50


def test_resample_counts_count_each_conversation_drawn_in_each_resample() -> None:
    counts = _resample_counts(np.random.default_rng(5), 7, 4)
    picked = np.random.default_rng(5).integers(0, 7, size=(4, 7))  # the same draws
    expected = np.zeros((4, 7))
    for resample, row in enumerate(picked):
        for unit in row:
            expected[resample, unit] += 1
    assert counts.dtype == float
    assert np.array_equal(counts, expected)
    assert counts.sum(axis=1).tolist() == [7.0] * 4


def _random_trajectories(seed: int, missing_agent: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(12):
        for agent in ("Ann", "Bo", "Cy")[: int(rng.integers(1, 4))]:
            for rnd in rng.permutation(4)[: int(rng.integers(1, 5))]:  # gaps, any order
                rows.append(
                    {
                        "conversation_id": f"c{c % 5}-{c}",
                        "agent": agent,
                        "model": f"m{c % 2}",
                        "round": int(rnd),
                        "private": float(rng.integers(0, 2)) if rng.random() > 0.1 else np.nan,
                        "public": float(rng.integers(0, 7)),
                        "neighbours_private": rng.random(),
                        "neighbours_public": rng.random() if rng.random() > 0.2 else np.nan,
                    }
                )
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed)
    if missing_agent:
        frame.iloc[::7, frame.columns.get_loc("agent")] = None
    return frame.astype({"conversation_id": "str"})


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("missing_agent", [False, True])
def test_transitions_are_the_text_keyed_group_by(seed: int, missing_agent: bool) -> None:
    from . import _reference

    frame = _random_trajectories(seed, missing_agent)
    for channel in ("private", "public"):
        pd.testing.assert_frame_equal(
            transitions(frame, channel), _reference.transitions(frame, channel), check_exact=True
        )
