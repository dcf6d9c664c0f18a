"""Dyad metrics on a hand-built run of five conversations (T = 3) with known answers.

Hand computation (aligned axis; wording "opposite" mirrors r -> 6 - r):

A  m1 vs m1, manipulative, first.   D ratings 2,2,3,3   O ratings 5,5,5,4
   categories D: ACCEPT, IGNORE, ACCEPT; O: REJECT, ACCEPT, IGNORE
   states: start D=2, O=5. r1 D ACCEPT -> 3, O REJECT away from 3 -> 6;
           r2 D IGNORE 3, O ACCEPT towards 3 -> 5; r3 D ACCEPT towards 5 -> 4, O IGNORE 5
   D states 2,3,3,4 vs ratings 2,3,3 at rounds 1..3: equal only r2 -> 1/3, |diff| 1,0,1 -> 2/3
   O states 6,5,5 vs ratings 5,5,4: equal only r2 -> 1/3, |diff| 1,0,1 -> 2/3
   shift D +1, O -1; gap 3 -> 1, change -2, converged
   last three ratings: D 2,3,3 not stable; O 5,5,4 not stable
B  m1 vs m1, plain, opposite.       raw D 3,3,3,3 -> 3,3,3,3; raw O 1,1,0,0 -> 5,5,6,6
   categories: all REJECT for both
   states: r1 D away from 5 -> 2, O away from 2 -> 6; r2 D -> 1, O -> 7 clipped 6; r3 D 0, O 6
   D states 2,1,0 vs 3,3,3: share 0, |diff| 1,2,3 -> 2
   O states 6,6,6 vs 5,6,6: share 2/3, |diff| 1,0,0 -> 1/3
   shift D 0, O +1; gap 2 -> 3, change +1, not converged
   last three: D 3,3,3 stable; O 5,6,6 not
C  m1 vs m2, manipulative, first.   D 4,4,4,5   O 4,4,4,4
   categories D: ACCEPT, (parse failure), IGNORE; O: REJECT, REJECT, ACCEPT
   states: r1 D ACCEPT equal -> 4, O REJECT equal above 3 -> 5; r2 D unreadable -> unknown,
           so O's r2 step (which reads D's state) is unknown too; r3 both unknown
   D states 4,?,? vs 4,4,5: round 1 only: share 1, |diff| 0
   O states 5,?,? vs 4,4,4: round 1 only: share 0, |diff| 1
   (4 role-rounds without a state)
   shift D +1, O 0; gap 0 -> 1, change +1, not converged
   last three: D 4,4,5 no; O 4,4,4 stable
D  m1 vs m2, plain, first.          D 1,1,1,1   O 5,5,5,(parse failure)
   categories all IGNORE: states stay 1 and 5
   D share 1, |diff| 0 (3 rounds); O share 1, |diff| 0 over rounds 1-2 only
   excluded from shift analysis (no post rating for O); O left out of late stability
E  failed conversation: counted, otherwise ignored.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from backchannel.analysis import Design, separation_problems
from backchannel.paradigms.dyad import DyadMetrics, dyad_metrics, extract

from ._build import FAIL, Conv, tables

ACC, REJ, IGN = "ACCEPT", "REJECT", "IGNORE"


def hand_run() -> list[Conv]:
    return [
        Conv(
            "A",
            "m1",
            "m1",
            "human",
            "manipulative",
            "first",
            [2, 2, 3, 3],
            [5, 5, 5, 4],
            [ACC, IGN, ACC],
            [REJ, ACC, IGN],
        ),
        Conv(
            "B",
            "m1",
            "m1",
            "natural",
            "plain",
            "opposite",
            [3, 3, 3, 3],
            [1, 1, 0, 0],
            [REJ] * 3,
            [REJ] * 3,
        ),
        Conv(
            "C",
            "m1",
            "m2",
            "neutral",
            "manipulative",
            "first",
            [4, 4, 4, 5],
            [4, 4, 4, 4],
            [ACC, FAIL, IGN],
            [REJ, REJ, ACC],
        ),
        Conv(
            "D",
            "m1",
            "m2",
            "human",
            "plain",
            "first",
            [1, 1, 1, 1],
            [5, 5, 5, FAIL],
            [IGN] * 3,
            [IGN] * 3,
        ),
        Conv("E", "m2", "m1", "human", "plain", "first", [1], [5], [], [], status="failed"),
    ]


@pytest.fixture(scope="module")
def result() -> DyadMetrics:
    return dyad_metrics(tables(hand_run()))


def by_pairing(rows: list) -> dict:
    """Rows of a `by_pairing` table by their pairing."""
    return {row.pairing: row for row in rows}


def test_result_is_strict_json_and_separates_every_factor(result: DyadMetrics) -> None:
    json.dumps(result.as_json(), allow_nan=False)
    assert separation_problems(result, Design.of(tables(hand_run()))) == []
    five = ["discussant_model", "opponent_model", "stance", "style", "wording"]
    within = ["stance", "style", "wording"]
    assert result.pooled["shifts.overall"] == five
    assert result.pooled["categories.opponent.by_pairing"] == within
    assert result.pooled["tests.manipulation.by_pairing"] == within
    assert result.pooled["tests.pairing_comparisons"] == five
    assert "shifts.by_cell" not in result.pooled


def test_counts(result: DyadMetrics) -> None:
    assert result.counts.model_dump() == {
        "conversations": 5,
        "failed_conversations": 1,
        "finished_conversations": 4,
        "excluded_from_shift": 1,
        "missing_ratings": 1,
        "failed_rating_events": 1,
        "category_parse_failures": 1,
        "rounds_without_state": 4,
    }
    assert result.pairings == ["m1 vs m1", "m1 vs m2"]


def test_states_and_outcomes_per_conversation() -> None:
    frames = extract(tables(hand_run()))
    traj = frames.trajectories.set_index(["conversation_id", "role"])
    states = {key: list(group["state"]) for key, group in traj.groupby(level=[0, 1], sort=False)}
    assert states[("A", "discussant")] == [2, 3, 3, 4]
    assert states[("A", "opponent")] == [5, 6, 5, 5]
    assert states[("B", "discussant")] == [3, 2, 1, 0]
    assert states[("B", "opponent")] == [5, 6, 6, 6]
    assert states[("C", "discussant")][:2] == [4, 4]
    assert states[("C", "opponent")][:2] == [4, 5]
    assert np.isnan(states[("C", "discussant")][2:]).all()
    assert np.isnan(states[("C", "opponent")][2:]).all()
    assert list(traj.loc[("B", "opponent"), "rating"]) == [5, 5, 6, 6]  # mirrored wording
    out = frames.outcomes.set_index("conversation_id")
    assert list(out["shift_discussant"][["A", "B", "C"]]) == [1, 0, 1]
    assert list(out["shift_opponent"][["A", "B", "C"]]) == [-1, 1, 0]
    assert list(out["gap_pre"][["A", "B", "C"]]) == [3, 2, 0]
    assert list(out["gap_post"][["A", "B", "C"]]) == [1, 3, 1]
    assert list(out["converged"][["A", "B", "C", "D"]]) == [True, False, False, False]
    assert list(out["complete"]) == [True, True, True, False]
    assert list(frames.analysable["conversation_id"]) == ["A", "B", "C"]


def test_shift_means_use_t_intervals(result: DyadMetrics) -> None:
    (overall,) = result.shifts.overall
    assert overall.cell == {} and overall.pairing is None
    shift_d = overall.shift_discussant
    # mean of 1, 0, 1 = 2/3; interval checked against scipy's t interval
    values = np.array([1.0, 0.0, 1.0])
    low, high = stats.t.interval(0.95, 2, loc=values.mean(), scale=stats.sem(values))
    assert shift_d.estimate == pytest.approx(2 / 3)
    assert (shift_d.low, shift_d.high) == pytest.approx((low, high))
    assert shift_d.n == 3
    assert overall.shift_opponent.estimate == pytest.approx(0)
    assert overall.gap_change.estimate == pytest.approx(0)
    rows = by_pairing(result.shifts.by_pairing)
    assert list(rows) == ["m1 vs m1", "m1 vs m2"]
    assert rows["m1 vs m1"].cell == {"discussant_model": "m1", "opponent_model": "m1"}
    assert rows["m1 vs m1"].gap_change.estimate == pytest.approx(-0.5)  # (-2 + 1) / 2
    single = rows["m1 vs m2"].gap_change.model_dump()
    assert single == {
        "estimate": 1.0,
        "low": None,
        "high": None,
        "n": 1,
        "skipped": "one value: no spread to build an interval from",
    }


def test_convergence(result: DyadMetrics) -> None:
    (overall,) = result.convergence.overall
    assert overall.model_dump() == {"converged": 1, "n": 3, "share": pytest.approx(1 / 3)}
    rows = by_pairing(result.convergence.by_pairing)
    assert rows["m1 vs m1"].share == 0.5
    assert rows["m1 vs m2"].share == 0.0


def test_category_rates_are_conversation_means(result: DyadMetrics) -> None:
    (row,) = result.categories.discussant.overall
    d = row.model_dump()
    # per-conversation discussant shares over A, B, C, D:
    # ACCEPT 2/3, 0, 1/3, 0 -> 1/4; REJECT 0, 1, 0, 0 -> 1/4
    # IGNORE 1/3, 0, 1/3, 1 -> 5/12; PARSE_FAILURE 0, 0, 1/3, 0 -> 1/12
    assert d["ACCEPT"]["estimate"] == pytest.approx(1 / 4)
    assert d["REJECT"]["estimate"] == pytest.approx(1 / 4)
    assert d["IGNORE"]["estimate"] == pytest.approx(5 / 12)
    assert d["PARSE_FAILURE"]["estimate"] == pytest.approx(1 / 12)
    o = by_pairing(result.categories.opponent.by_pairing)["m1 vs m2"].model_dump()
    # C: REJECT 2/3, ACCEPT 1/3; D: IGNORE 1 -> REJECT 1/3, ACCEPT 1/6, IGNORE 1/2
    assert o["REJECT"]["estimate"] == pytest.approx(1 / 3)
    assert o["ACCEPT"]["estimate"] == pytest.approx(1 / 6)
    assert o["IGNORE"]["estimate"] == pytest.approx(1 / 2)


def test_agreement_of_the_two_measures(result: DyadMetrics) -> None:
    d = result.agreement.discussant.overall[0].model_dump()
    # share equal 1/3, 0, 1, 1 -> 7/12; mean |diff| 2/3, 2, 0, 0 -> 2/3; rounds 3+3+1+3
    assert d["share_equal"]["estimate"] == pytest.approx(7 / 12)
    assert d["mean_abs_diff"]["estimate"] == pytest.approx(2 / 3)
    assert d["role_rounds"] == 10
    o = result.agreement.opponent.overall[0].model_dump()
    # share equal 1/3, 2/3, 0, 1 -> 1/2; mean |diff| 2/3, 1/3, 1, 0 -> 1/2; rounds 3+3+1+2
    assert o["share_equal"]["estimate"] == pytest.approx(0.5)
    assert o["mean_abs_diff"]["estimate"] == pytest.approx(0.5)
    assert o["role_rounds"] == 9
    same = by_pairing(result.agreement.opponent.by_pairing)["m1 vs m1"]
    assert same.share_equal.estimate == pytest.approx(0.5)  # (1/3 + 2/3) / 2


def test_late_stability(result: DyadMetrics) -> None:
    late = result.late_stability
    assert late.window == 3
    # stable: B-D, C-O, D-D of seven usable roles; D-O lacks its last rating
    assert late.all_roles.overall[0].model_dump() == {
        "stable": 3,
        "n": 7,
        "share": pytest.approx(3 / 7),
        "left_out": 1,
    }
    assert late.discussant.overall[0].share == pytest.approx(2 / 4)
    assert late.opponent.overall[0].share == pytest.approx(1 / 3)
    assert by_pairing(late.opponent.by_pairing)["m1 vs m2"].left_out == 1


def test_stability_window_is_configurable() -> None:
    late = dyad_metrics(tables(hand_run()), window=1).late_stability
    assert late.window == 1
    assert late.all_roles.overall[0].share == 1.0  # one rating is always "identical"
    with pytest.raises(ValueError):
        dyad_metrics(tables(hand_run()), window=0)


def test_a_run_without_finished_conversations() -> None:
    run = [Conv("E", "m1", "m1", "human", "plain", "first", [1], [5], [], [], status="failed")]
    result = dyad_metrics(tables(run))
    assert result.counts.finished_conversations == 0
    assert result.shifts.overall[0].shift_discussant.n == 0
    assert result.shifts.by_pairing == [] and result.categories.discussant.overall == []
    json.dumps(result.as_json(), allow_nan=False)


def test_headline_is_the_study_shift_table(result: DyadMetrics) -> None:
    from backchannel.analysis import compare_study
    from backchannel.paradigms.dyad import Dyad

    headline = result.headline()
    values = {(v.cell["pairing"], v.measure): v for v in headline.rows}
    assert headline.index == ["pairing"] and headline.columns == []
    # all: shifts D 1, 0, 1 -> 2/3; gap change -2, +1, +1 -> 0; m1 vs m1: D (1 + 0) / 2
    assert values[("all", "Discussant shift")].estimate == pytest.approx(2 / 3)
    assert values[("all", "Discussant shift")].n == 3
    assert values[("all", "gap change")].estimate == pytest.approx(0)
    assert values[("m1 vs m1", "Discussant shift")].estimate == pytest.approx(0.5)
    assert values[("m1 vs m1", "Opponent absolute shift")].estimate == pytest.approx(1.0)
    assert values[("m1 vs m2", "gap change")].skipped is not None  # one conversation
    study = Dyad().study()
    assert study is not None
    compared = compare_study(headline, study)
    assert {c.measure for c in compared} == {
        "Discussant shift",
        "Opponent shift",
        "Discussant absolute shift",
        "Opponent absolute shift",
        "gap change",
    }
    assert all(c.run is not None and c.run_cell == {"pairing": "all"} for c in compared)
