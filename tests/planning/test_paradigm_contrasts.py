"""Every paradigm declares its headline contrasts from the design's levels, and a stored run's
contrast agrees with the paradigm's own metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import backchannel as bc
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import read_contrast


@pytest.mark.parametrize(
    ("paradigm", "levels", "names"),
    [
        ("peer_pressure", {"k": [0, 1, 3]}, ["fpi_gap"]),
        ("peer_pressure", {"k": [1, 3]}, []),
        ("testimony", {"condition": ["C0", "C1"]}, ["truth_gap", "true_share_gap"]),
        ("testimony", {"intervention": ["none", "warning"]}, []),
        (
            "dyad",
            {
                "discussant_model": ["a", "b"],
                "opponent_model": ["a", "b"],
                "style": ["manipulative", "plain"],
            },
            ["opponent_effect", "discussant_effect", "style_effect"],
        ),
        ("dyad", {"stance": ["human", "neutral"]}, []),
        ("council", {"pool": ["A", "B"]}, ["fcc_gap"]),
        ("council", {}, []),
        ("discussion", {"model": ["sim"]}, []),
    ],
)
def test_contrasts_follow_the_designs_levels(
    paradigm: str, levels: dict[str, list[object]], names: list[str]
) -> None:
    found = get_paradigm(paradigm).contrasts(levels)
    assert [c.name for c in found] == names
    for contrast in found:
        assert contrast.unit == "conversation" and contrast.outcome


def test_a_dyad_model_factor_of_three_levels_says_which_two_it_compares() -> None:
    found = get_paradigm("dyad").contrasts({"opponent_model": ["a", "b", "c"]})
    (contrast,) = found
    assert contrast.first.levels == {"opponent_model": "b"}
    assert contrast.second.levels == {"opponent_model": "a"}
    assert "first two of its 3 levels; c in no contrast" in contrast.title
    (two,) = get_paradigm("dyad").contrasts({"opponent_model": ["a", "b"]})
    assert "first two" not in two.title


def _peer_pressure_run(tmp_path: Path) -> bc.Run:
    experiment = {
        "name": "pp-contrast",
        "paradigm": "peer_pressure",
        "seed": 5,
        "replicates": 2,
        "factors": {"k": [0, 1], "n_agents": [3, 4]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 4}],
            "rounds": 2,
            "reask": {"checkpoints": [], "items": 0},
            "judge": {"kind": "llm", "model": "sim/population"},
        },
        "population": {"peer_pressure": {"adopt": 0.4}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return bc.run(path, tmp_path / "run")


def test_fpi_gap_is_the_difference_of_the_metrics_fpi(tmp_path: Path) -> None:
    run = _peer_pressure_run(tmp_path)
    paradigm = get_paradigm("peer_pressure")
    (contrast,) = paradigm.contrasts({"k": [0, 1]})
    reading = read_contrast(contrast, run.tables, AnalysisOptions())
    fpi = {(r.cell["n_agents"], r.cell["k"]): r for r in run.metrics().fpi.by_cell}
    assert [row.stratum for row in reading.rows] == [{"n_agents": 3}, {"n_agents": 4}]
    for row in reading.rows:
        n = row.stratum["n_agents"]
        one, none = fpi[(n, 1)], fpi[(n, 0)]
        assert row.estimate == pytest.approx(one.fpi - none.fpi)
        assert (row.first.n, row.second.n) == (one.fpi_n, none.fpi_n) == (8, 8)
        assert row.first.trials == n - 1 and row.second.trials == n  # honest agents probed
        assert row.halfwidth is not None and row.halfwidth > 0
    assert reading.halfwidth == max(row.halfwidth or 0 for row in reading.rows)


def _run(tmp_path: Path, experiment: dict[str, object]) -> bc.Run:
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({"name": "contrast", "seed": 3, **experiment}))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["done"] == len(run.conversations)
    return run


def test_testimony_gaps_are_the_metrics_condition_gaps(tmp_path: Path) -> None:
    factors = {"model": ["sim/population#wary"], "condition": ["C0", "C1"]}
    run = _run(
        tmp_path,
        {
            "paradigm": "testimony",
            "items_limit": 8,
            "factors": factors,
            "settings": {"deceptions": ["event"], "intervention": "none"},
            "population": {"testimony": {"trust": 0.5}},
        },
    )
    metrics = run.metrics()
    gaps = {
        g.measure: g
        for g in metrics.condition_gaps
        if g.split == "all" and g.checkpoint == metrics.checkpoints[-1]
    }
    measures = {"truth_gap": "truth_majority", "true_share_gap": "true_vote_share"}
    for contrast in get_paradigm("testimony").contrasts(factors):
        (row,) = read_contrast(contrast, run.tables, AnalysisOptions()).rows
        gap = gaps[measures[contrast.name]]
        assert row.stratum == {"model": "sim/population#wary"}
        assert row.estimate == pytest.approx(gap.estimate_pp / 100)
        assert row.pairs == gap.n == 8


def test_dyad_effects_are_differences_of_the_pairing_shifts(tmp_path: Path) -> None:
    factors = {
        "discussant_model": ["sim/population#a", "sim/population#b"],
        "opponent_model": ["sim/population#a", "sim/population#b"],
    }
    run = _run(
        tmp_path,
        {
            "paradigm": "dyad",
            "replicates": 2,
            "factors": factors,
            "settings": {"rounds": 2},
            "population": {"models": {"b": {"dyad": {"discussant_rate": 0.4}}}},
        },
    )
    shift = {
        (s.cell["discussant_model"], s.cell["opponent_model"]): s.shift_discussant
        for s in run.metrics().shifts.by_pairing
    }
    a, b = "sim/population#a", "sim/population#b"
    found = {c.name: c for c in get_paradigm("dyad").contrasts(factors)}
    assert set(found) == {"opponent_effect", "discussant_effect"}
    for row in read_contrast(found["discussant_effect"], run.tables, AnalysisOptions()).rows:
        opponent = row.stratum["opponent_model"]
        first, second = shift[(b, opponent)], shift[(a, opponent)]
        assert row.estimate == pytest.approx(first.estimate - second.estimate)
        assert (row.first.n, row.second.n) == (first.n, second.n)


def test_council_fcc_gap_is_the_difference_of_the_pools_fcc(tmp_path: Path) -> None:
    factors = {"pool": ["A", "B"]}
    run = _run(
        tmp_path,
        {
            "paradigm": "council",
            "replicates": 3,
            "factors": factors,
            "settings": {
                "scenarios": ["housing"],
                "single_model": "sim/population#a",
                "pool_models": ["sim/population#a", "sim/population#b"],
                "verifier_model": "sim/population#a",
            },
        },
    )
    fcc = {g.state: g.fcc for g in run.metrics().groups}
    (contrast,) = get_paradigm("council").contrasts(factors)
    (row,) = read_contrast(contrast, run.tables, AnalysisOptions()).rows
    assert row.stratum == {"scenario": "housing", "delphi": "none"}
    assert row.estimate == pytest.approx(fcc["A"].estimate - fcc["B"].estimate)
    assert (row.first.n, row.second.n) == (fcc["A"].n, fcc["B"].n) == (3, 3)
