"""The contrast hook's shared layer on hand-built units: arms, strata, and the Welch and paired
intervals against statsmodels and scipy on the same numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttest_ind

from backchannel.planning import Arm, Contrast, Units, estimate_contrast, intra_correlation


def _reader(tables: object, options: object) -> pd.DataFrame:
    raise AssertionError("not read in these tests")


def _contrast(kind: str = "mean", **extra: object) -> Contrast:
    return Contrast(
        name="gap",
        title="a gap",
        first=Arm({"k": 1}),
        second=Arm({"k": 0}),
        kind=kind,  # type: ignore[arg-type]
        reader=_reader,
        **extra,  # type: ignore[arg-type]
    )


def _units(rows: list[dict[str, object]], strata: tuple[str, ...] = ()) -> Units:
    frame = pd.DataFrame(rows)
    if "trials" not in frame.columns:
        frame["trials"] = 1.0
    frame["arm"] = ["first" if r["k"] == 1 else "second" for r in rows]
    return Units(frame, strata)


def test_arms_select_by_level_and_names_are_checked() -> None:
    assert Arm({"k": 1}).matches({"k": 1.0, "model": "m"})
    assert not Arm({"k": 1}).matches({"k": 0})
    assert not Arm({"k": 1}).matches({"model": "m"})
    assert Arm({"condition": "C0", "intervention": "none"}).label() == (
        "condition=C0, intervention=none"
    )
    with pytest.raises(ValueError, match="lowercase"):
        Contrast("FPI gap", "t", Arm({"k": 1}), Arm({"k": 0}), "mean", _reader)
    with pytest.raises(ValueError, match="same keys"):
        Contrast("g", "t", Arm({"k": 1}), Arm({"n": 0}), "mean", _reader)
    with pytest.raises(ValueError, match="same cells"):
        Contrast("g", "t", Arm({"k": 1}), Arm({"k": 1}), "mean", _reader)
    with pytest.raises(ValueError, match="kind"):
        Contrast("g", "t", Arm({"k": 1}), Arm({"k": 0}), "median", _reader)  # type: ignore[arg-type]


def test_strata_are_the_other_factors_without_pooled_ones() -> None:
    contrast = _contrast(pooled=("style",), strata=("scenario",))
    assert contrast.stratum_keys(["model", "k", "style"]) == ["model", "scenario"]


def test_independent_arms_give_the_welch_interval() -> None:
    first = [0.5, 0.25, 0.75, 1.0, 0.5]
    second = [0.0, 0.25, 0.0, 0.5]
    rows = [{"conversation_id": f"a{i}", "k": 1, "value": v} for i, v in enumerate(first)]
    rows += [{"conversation_id": f"b{i}", "k": 0, "value": v} for i, v in enumerate(second)]
    rows.append({"conversation_id": "b9", "k": 0, "value": math.nan})
    (row,) = estimate_contrast(_contrast(), _units(rows)).rows
    assert row.estimate == pytest.approx(np.mean(first) - np.mean(second))
    # By hand: Welch's se and Satterthwaite df, checked against statsmodels' test.
    va, vb = np.var(first, ddof=1) / 5, np.var(second, ddof=1) / 4
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 3)
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert row.halfwidth == pytest.approx(half)
    assert ttest_ind(first, second, usevar="unequal")[2] == pytest.approx(df)
    assert (row.first.n, row.second.n, row.second.missing) == (5, 4, 1)
    assert row.method == "welch"


def test_paired_arms_give_the_t_interval_of_the_differences() -> None:
    first = [1, 1, 0, 1, 1, 0]
    second = [0, 1, 0, 0, 1, 1]
    rows = [
        {"conversation_id": f"{k}{i}", "k": k, "item_id": f"s{i}", "replicate": 0, "value": v}
        for k, values in ((1, first), (0, second))
        for i, v in enumerate(values)
    ]
    rows.append({"conversation_id": "x", "k": 1, "item_id": "s9", "replicate": 0, "value": 1})
    (row,) = estimate_contrast(_contrast("paired_proportion"), _units(rows)).rows
    differences = np.subtract(first, second)
    low, high = stats.t.interval(
        0.95, len(differences) - 1, loc=differences.mean(), scale=stats.sem(differences)
    )
    assert (row.estimate, row.low, row.high) == pytest.approx((differences.mean(), low, high))
    assert row.pairs == 6  # the story with one arm only is no pair
    assert row.discordant == (2, 1)
    assert row.sd_difference == pytest.approx(differences.std(ddof=1))


def test_each_stratum_is_a_row_and_the_widest_bounds_the_reading() -> None:
    rows = []
    for model, spread in (("a", 0.1), ("b", 0.4)):
        for i in range(4):
            rows.append(
                {
                    "conversation_id": f"{model}1{i}",
                    "k": 1,
                    "model": model,
                    "value": 0.5 + spread * (i - 1.5),
                }
            )
            rows.append(
                {
                    "conversation_id": f"{model}0{i}",
                    "k": 0,
                    "model": model,
                    "value": 0.2 + spread * (i - 1.5),
                }
            )
    # A stratum with one arm only is no row of this run's contrast.
    rows.append({"conversation_id": "c", "k": 1, "model": "c", "value": 1.0})
    reading = estimate_contrast(_contrast(), _units(rows, ("model",)))
    assert [r.stratum for r in reading.rows] == [{"model": "a"}, {"model": "b"}]
    widths = [r.halfwidth for r in reading.rows]
    assert reading.halfwidth == max(w for w in widths if w is not None)
    assert widths[0] is not None and widths[1] is not None and widths[0] < widths[1]
    assert reading.n == 4
    assert reading.value("halfwidth") == reading.halfwidth
    assert reading.value("estimate") is None  # two strata: no one estimate
    with pytest.raises(KeyError):
        reading.value("width")


def test_an_arm_without_spread_or_values_says_why() -> None:
    rows = [
        {"conversation_id": "a", "k": 1, "value": 0.5},
        {"conversation_id": "b", "k": 0, "value": 0.0},
        {"conversation_id": "c", "k": 0, "value": 0.0},
    ]
    (row,) = estimate_contrast(_contrast(), _units(rows)).rows
    assert row.estimate == 0.5 and row.halfwidth is None
    assert row.skipped is not None and "one value" in row.skipped
    rows[0]["value"] = math.nan
    (row,) = estimate_contrast(_contrast(), _units(rows)).rows
    assert row.estimate is None and row.skipped == "no value in arm k=1"
    # No spread in either arm: the zero-width interval at the difference.
    rows = [{"conversation_id": f"{k}{i}", "k": k, "value": 0.0} for k in (0, 1) for i in range(3)]
    (row,) = estimate_contrast(_contrast(), _units(rows)).rows
    assert (row.estimate, row.halfwidth) == (0.0, 0.0)


def test_intra_correlation_by_hand() -> None:
    # Clusters all-or-nothing: every agent of a conversation agrees, so the correlation is 1.
    assert intra_correlation(np.array([4.0, 0.0, 4.0, 0.0]), np.full(4, 4.0)) == pytest.approx(1.0)
    # Two clusters of two, 1 of 2 each: between = 0, within = (2*.25*2)/(4-2) = 0.5, so the
    # estimate (0 - 0.5) / (0 + 1 * 0.5) = -1 is clamped at 0.
    assert intra_correlation(np.array([1.0, 1.0]), np.array([2.0, 2.0])) == 0.0
    # y = (2, 0, 1) of 2 each: p = 1/2; between = 2(.25 + .25 + 0)/2 = 0.5;
    # within = 2(0 + 0 + .25)/(6 - 3) = 1/6; m0 = (6 - 12/6)/2 = 2;
    # rho = (0.5 - 1/6) / (0.5 + 1/6) = 0.5.
    rho = intra_correlation(np.array([2.0, 0.0, 1.0]), np.array([2.0, 2.0, 2.0]))
    assert rho == pytest.approx(0.5)
    assert intra_correlation(np.array([1.0]), np.array([2.0])) is None
