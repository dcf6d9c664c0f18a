"""A factor the run declares beyond the five analysis levels gets its own rows everywhere.

Hand-built run: `rounds` is a factor with levels 2 and 3; every conversation has stance human
and wording first; ratings on the aligned axis (wording first: raw = aligned).

R2a  m1 vs m1, plain,        T = 2   D 2,3,4    O 5,5,5    shift D +2, O 0;  gap 3 -> 1 (-2)
R2b  m1 vs m2, manipulative, T = 2   D 3,3,3    O 4,4,6    shift D 0,  O +2; gap 1 -> 3 (+2)
R3a  m1 vs m1, plain,        T = 3   D 1,1,1,1  O 6,6,6,5  shift D 0,  O -1; gap 5 -> 4 (-1)
R3b  m1 vs m2, manipulative, T = 3   D 2,2,2,6  O 2,2,2,2  shift D +4, O 0;  gap 0 -> 4 (+4)

Overall per level: rounds 2: shift D (2 + 0) / 2 = 1, gap change 0, one of two converged;
rounds 3: shift D (0 + 4) / 2 = 2, gap change 1.5, one of two converged. Pooling both levels,
as the metrics did before `rounds` was a key of every row, gave one shift D of 1.5 over n = 4.
Per pairing and level each row holds one conversation: m1 vs m1 at 2 (+2), at 3 (0); m1 vs m2
at 2 (0), at 3 (+4). Late stability (last 3 ratings): R2a D 2,3,4 no, O 5,5,5 yes; R2b D yes,
O 4,4,6 no; R3a D 1,1,1 yes, O 6,6,5 no; R3b D 2,2,6 no, O 2,2,2 yes -> 2 of 4 per level.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from backchannel.analysis import Design, separation_problems
from backchannel.paradigms.dyad import DyadMetrics, dyad_metrics
from backchannel.paradigms.dyad._report import fill_report
from backchannel.report import Report

from ._build import Conv, tables

ACC, IGN = "ACCEPT", "IGNORE"


def rounds_run() -> list[Conv]:
    def conv(cid: str, opponent: str, style: str, d: list[int], o: list[int], rounds: int) -> Conv:
        cats = [ACC] * rounds
        return Conv(
            cid,
            "m1",
            opponent,
            "human",
            style,
            "first",
            d,
            o,
            cats,
            [IGN] * rounds,
            levels={"rounds": rounds},
        )

    return [
        conv("R2a", "m1", "plain", [2, 3, 4], [5, 5, 5], 2),
        conv("R2b", "m2", "manipulative", [3, 3, 3], [4, 4, 6], 2),
        conv("R3a", "m1", "plain", [1, 1, 1, 1], [6, 6, 6, 5], 3),
        conv("R3b", "m2", "manipulative", [2, 2, 2, 6], [2, 2, 2, 2], 3),
    ]


@pytest.fixture(scope="module")
def result() -> DyadMetrics:
    return dyad_metrics(tables(rounds_run()))


def test_overall_rows_are_per_level_of_the_extra_factor(result: DyadMetrics) -> None:
    overall = result.shifts.overall
    assert [row.cell for row in overall] == [{"rounds": 2}, {"rounds": 3}]
    assert [row.shift_discussant.estimate for row in overall] == [1.0, 2.0]
    assert [row.shift_discussant.n for row in overall] == [2, 2]
    assert [row.gap_change.estimate for row in overall] == [0.0, 1.5]
    convergence = result.convergence.overall
    assert [(row.cell["rounds"], row.converged, row.n) for row in convergence] == [
        (2, 1, 2),
        (3, 1, 2),
    ]
    late = result.late_stability.all_roles.overall
    assert [(row.cell["rounds"], row.stable, row.n) for row in late] == [(2, 2, 4), (3, 2, 4)]


def test_pairing_rows_carry_the_models_and_the_extra_level(result: DyadMetrics) -> None:
    rows = [
        (row.pairing, row.cell, row.shift_discussant.estimate) for row in result.shifts.by_pairing
    ]
    m11 = {"discussant_model": "m1", "opponent_model": "m1"}
    m12 = {"discussant_model": "m1", "opponent_model": "m2"}
    assert rows == [
        ("m1 vs m1", {**m11, "rounds": 2}, 2.0),
        ("m1 vs m1", {**m11, "rounds": 3}, 0.0),
        ("m1 vs m2", {**m12, "rounds": 2}, 0.0),
        ("m1 vs m2", {**m12, "rounds": 3}, 4.0),
    ]
    # the cell table: one row per cell of all six factors in the design's order (here one
    # conversation each)
    cells = result.shifts.by_cell
    assert [(r.pairing, r.cell["rounds"], r.shift_opponent.estimate) for r in cells] == [
        ("m1 vs m1", 2, 0.0),
        ("m1 vs m1", 3, -1.0),
        ("m1 vs m2", 2, 2.0),
        ("m1 vs m2", 3, 0.0),
    ]
    assert list(cells[0].cell) == [*m11, "stance", "style", "wording", "rounds"]


def test_tests_are_within_each_level_and_the_models_take_it_as_a_term(
    result: DyadMetrics,
) -> None:
    contrasts = result.tests.manipulation.overall
    assert [row.cell for row in contrasts] == [{"rounds": 2}, {"rounds": 3}]
    # manipulative minus plain, one conversation each: R2b - R2a = 0 - 2; R3b - R3a = 4 - 0
    assert [row.shift_discussant.difference for row in contrasts] == [-2.0, 4.0]
    comparisons = result.tests.pairing_comparisons["shift_discussant"]
    assert [(row.cell, row.first, row.second) for row in comparisons] == [
        ({"rounds": 2}, "m1 vs m1", "m1 vs m2"),
        ({"rounds": 3}, "m1 vs m1", "m1 vs m2"),
    ]
    assert [row.difference for row in comparisons] == [2.0, -4.0]
    main = result.tests.models["gap_change"].main
    assert main.formula == "gap_change ~ C(pairing) + C(style) + C(rounds)"


def test_nothing_is_averaged_over_a_factor_unnamed(result: DyadMetrics) -> None:
    design = Design.of(tables(rounds_run()))
    assert design.factors[-1] == "rounds"
    assert separation_problems(result, design) == []
    assert all("rounds" not in pooled for pooled in result.pooled.values())


def test_report_tables_and_figures_keep_the_levels_apart(tmp_path: Path) -> None:
    run = tables(rounds_run())
    report = Report("dyad")
    fill_report(run, dyad_metrics(run), report)
    html = report.write(tmp_path).read_text()
    assert "The run also varies rounds" in html
    # a trajectory figure per pairing and level
    assert html.count("<figure>") == 4 + 2  # and the shift bars per level
    trajectories = pd.read_csv(tmp_path / "trajectories.csv")
    assert list(trajectories.columns[:2]) == ["rounds", "pairing"]
    # 2 pairings x 2 roles x (3 checkpoints at T = 2 + 4 at T = 3)
    assert len(trajectories) == 2 * 2 * (3 + 4)
    assert trajectories["conversations"].max() == 1
    shifts = pd.read_csv(tmp_path / "shifts.csv")
    overall = shifts[(shifts["pairing"] == "overall") & (shifts["quantity"] == "shift_discussant")]
    assert list(zip(overall["rounds"], overall["estimate"], strict=True)) == [(2, 1.0), (3, 2.0)]
