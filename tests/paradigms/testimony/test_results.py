"""Testimony's typed results on hand-built runs: the truth majority per deception type, a
factor beyond the arm giving its own rows in every table, and the headline in the study's
measure names, worked out by hand (the runs of test_metrics.py)."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import Design, compare_study, load_study, separation_problems
from backchannel.paradigms.testimony import testimony_metrics as compute_metrics

from ._tables import conversation, tables
from .test_metrics import RUNS, votes

# At R3 the analysed four (S, A, B, C) give: C0 s1 truth, s2 truth, s3 truth (3 true, one
# unreadable), s4 none; C1 s1 decoy, s2 truth, s3 none (2 decoy, 2 unreadable), s4 truth.
# s1, s2 are event deceptions, s3, s4 source ones.


def _wilson(k: int, n: int) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def test_the_truth_majority_per_deception_type() -> None:
    found = {
        (r.cell["condition"], r.deception): r.truth
        for r in compute_metrics(tables(*RUNS)).truth_by_deception
    }
    expected = {
        ("C0", "all"): (3, 4),
        ("C0", "event"): (2, 2),
        ("C0", "source"): (1, 2),
        ("C1", "all"): (2, 4),
        ("C1", "event"): (1, 2),
        ("C1", "source"): (1, 2),
    }
    assert set(found) == set(expected)
    for key, (k, n) in expected.items():
        rate = found[key]
        assert (rate.k, rate.n, rate.estimate) == (k, n, k / n), key
        assert (rate.low, rate.high) == pytest.approx(_wilson(k, n)), key


def test_the_headline_has_the_studys_measures_with_intervals_and_n() -> None:
    metrics = compute_metrics(tables(*RUNS))
    headline = metrics.headline()
    values = {(v.measure, v.cell["deception"], v.cell["condition"]): v for v in headline.rows}
    c0 = values[("truth majority", "all", "C0")]
    assert (c0.estimate, c0.n) == (0.75, 4)
    assert (c0.low, c0.high) == pytest.approx(_wilson(3, 4))
    assert values[("truth majority", "all", "C1")].estimate == 0.5
    assert values[("truth majority", "source", "C0")].estimate == 0.5
    # Paired per story, C0 - C1: s1 1, s2 0, s3 1, s4 -1 -> 0.25 (in shares).
    gap = values[("truth majority C0 - C1", "all", "C0 - C1")]
    assert gap.estimate == pytest.approx(0.25) and gap.n == 4
    assert gap.low is not None and gap.high is not None and gap.low <= 0.25 <= gap.high
    # Decoy-vote share, C1 - C0: s1 1 - 0, s2 0, s3 2/4 - 0, s4 0 -> 0.375; the interval flips
    # with the sign of the C0 - C1 gap the metrics keep.
    decoy = values[("decoy-vote share C1 - C0", "all", "C1 - C0")]
    (kept,) = [
        g
        for g in metrics.condition_gaps
        if (g.measure, g.checkpoint, g.split) == ("decoy_vote_share", "R3", "all")
    ]
    assert decoy.estimate == pytest.approx(0.375) and kept.estimate_pp == pytest.approx(-37.5)
    assert kept.low_pp is not None and kept.high_pp is not None
    assert (decoy.low, decoy.high) == pytest.approx((-kept.high_pp / 100, -kept.low_pp / 100))
    assert {m for m, _, _ in values} == {
        "truth majority",
        "truth majority C0 - C1",
        "true-vote share C0 - C1",
        "decoy-vote share C1 - C0",
    }
    assert headline.index == ["model", "deception"] and headline.columns == ["condition"]


def test_every_published_value_finds_its_cell_in_the_headline() -> None:
    study = load_study("backchannel.paradigms.testimony")
    assert study is not None
    rows = compare_study(compute_metrics(tables(*RUNS)).headline(), study)
    assert rows and all(r.run is not None for r in rows)
    (c0,) = [r for r in rows if r.measure == "truth majority" and r.cell["condition"] == "C0"]
    assert c0.run is not None and c0.run.estimate == 0.75


def _with_temperature() -> list[dict]:
    """The runs of test_metrics.py with s1, s2 at temperature 0.0 and s3, s4 at 0.7."""
    runs = []
    for spec in RUNS:
        level = 0.0 if spec["item"] in ("s1", "s2") else 0.7
        runs.append({**spec, "factors": {"temperature": level}})
    return runs


def test_a_factor_beyond_the_arm_gives_its_own_rows_everywhere() -> None:
    built = tables(*_with_temperature())
    metrics = compute_metrics(built)
    design = Design.of(built)
    assert design.factors == ("temperature",)
    assert separation_problems(metrics, design) == []
    final = {
        (r.cell["temperature"], r.cell["condition"]): r.truth.k
        for r in metrics.outcome_rates
        if (r.group, r.checkpoint) == ("participants", "R3")
    }
    assert final == {(0.0, "C0"): 2, (0.0, "C1"): 1, (0.7, "C0"): 1, (0.7, "C1"): 1}
    first = metrics.outcome_rates[0].model_dump(mode="json")
    assert list(first)[:6] == ["model", "condition", "intervention", "temperature", "group",
                               "checkpoint"]  # fmt: skip
    gaps = {
        r.cell["temperature"]: r.estimate_pp
        for r in metrics.condition_gaps
        if (r.measure, r.checkpoint, r.split) == ("truth_majority", "R3", "all")
    }
    # 0.0: s1 1, s2 0 -> 50 pp; 0.7: s3 1, s4 -1 -> 0 pp.
    assert gaps == pytest.approx({0.0: 50.0, 0.7: 0.0})
    (t1,) = [r for r in metrics.gap_at_T1 if r.cell["temperature"] == 0.0]
    # T1: s1 1 - 0, s2 0 - 0 (two true votes in C0, one in C1) -> 50 pp, all of the final gap.
    assert t1.share == pytest.approx(1.0)
    headline = metrics.headline()
    assert headline.index == ["model", "temperature", "deception"]
    assert {v.cell["temperature"] for v in headline.rows} == {0.0, 0.7}
    # No section pools temperature: the contrasting sections name only condition.
    assert all("temperature" not in factors for factors in metrics.pooled.values())


def test_a_run_without_votes_has_empty_tables_and_a_headline_without_rows() -> None:
    spec = conversation("s9", "C0", votes("uuuuu", "uuuuu", "uuuuu"))
    built = tables(spec)
    built.conversations.loc[0, "status"] = "failed"
    metrics = compute_metrics(built)
    assert metrics.outcome_rates == [] and metrics.truth_by_deception == []
    assert metrics.headline().rows == []
