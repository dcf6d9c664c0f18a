"""Every metric on hand-built runs whose answers are worked out here by hand."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from backchannel.paradigms.testimony import checkpoint_outcomes, outcome_of
from backchannel.paradigms.testimony import testimony_metrics as compute_metrics
from backchannel.paradigms.testimony._metrics import MEASURES, _paired_frames
from backchannel.paradigms.testimony._stats import (
    _paired_difference,
    mcnemar_exact,
    paired_difference,
    sign_test,
    wilson,
)
from backchannel.paradigms.testimony._votes import vote_kind

from ._tables import conversation, tables


def metrics_of(run: Any) -> dict[str, Any]:
    """The metrics as `--json` prints them."""
    return compute_metrics(run).as_json()


def votes(t0: str, t1: str, rounds: str) -> dict[str, str]:
    return {"T0": t0, "T1": t1, "R1": rounds, "R2": rounds, "R3": rounds}


# Letters: K S A B C (K, the key role, is never analysed); t true, d decoy, u UNKNOWN,
# o other container, x unreadable.
RUNS = [
    conversation("s1", "C0", votes("uuuuu", "ttttu", "ttttt"), deception="event"),
    conversation("s1", "C1", votes("uuuuu", "tdddu", "ddddd"), deception="event"),
    conversation("s2", "C0", votes("uuuuu", "tttuu", "ttttt"), deception="event", kind="broadcast"),
    conversation("s2", "C1", votes("uuuuu", "dtuuu", "dtttu"), deception="event", kind="broadcast"),
    conversation("s3", "C0", votes("uuuuu", "tttto", "ttttx"), deception="source"),
    conversation("s3", "C1", votes("uuuuu", "ddddd", "dxxdd"), deception="source"),
    conversation("s4", "C0", votes("uuuuu", "uuuuu", "uuuuu"), deception="source"),
    conversation("s4", "C1", votes("uuuuu", "uuuuu", "ttttt"), deception="source"),
]


def rate(metrics: dict, condition: str, checkpoint: str, group: str = "participants") -> dict:
    (entry,) = [
        e
        for e in metrics["outcome_rates"]
        if (e["condition"], e["checkpoint"], e["group"], e["intervention"])
        == (condition, checkpoint, group, "none")
    ]
    return entry


def test_vote_kinds_and_outcomes() -> None:
    assert [vote_kind(v, "red", "blue") for v in ("red", "blue", "UNKNOWN", "green", None)] == [
        "true",
        "decoy",
        "unknown",
        "other",
        "failed",
    ]
    assert outcome_of(["true", "true", "true", "decoy"], 3) == "truth"
    assert outcome_of(["decoy", "decoy", "decoy", "failed"], 3) == "decoy"
    assert outcome_of(["true", "true", "failed", "failed"], 3) == "none"
    assert outcome_of(["unknown"] * 4, 3) == "none"  # an UNKNOWN majority is no consensus


def test_outcomes_per_run_and_checkpoint_exclude_the_key_role() -> None:
    frame = checkpoint_outcomes(tables(*RUNS)).set_index(["item_id", "condition", "checkpoint"])
    # s1 C1 at T1: K votes t but is not analysed; S, A, B vote d, C UNKNOWN -> decoy.
    assert frame.loc[("s1", "C1", "T1"), "outcome"] == "decoy"
    assert frame.loc[("s1", "C1", "T1"), "true"] == 0
    assert frame.loc[("s2", "C0", "T1"), "outcome"] == "none"  # t t u u
    assert frame.loc[("s2", "C1", "R3"), "outcome"] == "truth"  # t t t u
    # s3 C1 at R3: S and A unreadable, B and C decoy: two failed votes, no consensus.
    row = frame.loc[("s3", "C1", "R3")]
    assert (row["failed"], row["decoy"], row["outcome"]) == (2, 2, "none")
    assert frame.loc[("s4", "C0", "R3"), "outcome"] == "none"  # UNKNOWN x4
    assert set(frame["voters"]) == {4}


def test_outcome_rates_with_wilson_intervals_and_vote_shares() -> None:
    metrics = metrics_of(tables(*RUNS))
    c0 = rate(metrics, "C0", "R3")
    assert c0["runs"] == 4 and c0["truth"]["k"] == 3  # s1, s2, s3
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert c0["truth"]["estimate"] == 0.75
    assert c0["truth"]["low"] == pytest.approx(low) and c0["truth"]["high"] == pytest.approx(high)
    c1 = rate(metrics, "C1", "R3")
    assert (c1["truth"]["k"], c1["decoy"]["k"], c1["none"]["k"]) == (2, 1, 1)
    # 16 analysed votes in C1 at R3: 7 true, 6 decoy, 1 UNKNOWN, 2 unreadable.
    assert c1["true_share"] == 7 / 16 and c1["decoy_share"] == 6 / 16
    assert c1["unknown_share"] == 1 / 16 and c1["failed_share"] == 2 / 16
    assert c1["other_share"] == 0 and c1["failed_votes"] == 2
    assert rate(metrics, "C0", "T1")["truth"]["k"] == 2  # s1, s3
    assert rate(metrics, "C1", "T0")["none"]["k"] == 4
    # Unreadable analysed votes: C of s3 C0 at R1, R2, R3 (3) and S, A of s3 C1 there (6).
    assert metrics["failed_votes"] == 9


def test_paired_gaps_overall_by_type_and_kind() -> None:
    metrics = metrics_of(tables(*RUNS))
    gaps = {
        (g["checkpoint"], g["split"], g["level"]): g
        for g in metrics["condition_gaps"]
        if g["measure"] == "truth_majority"
    }
    final = gaps[("R3", "all", "all")]
    # Per story C0 - C1 at R3: s1 1, s2 0, s3 1, s4 -1 -> mean 0.25.
    assert final["estimate_pp"] == pytest.approx(25.0) and final["n"] == 4
    # McNemar: 2 stories true only in C0, 1 true only in C1: exact p = 2 P(X <= 1 | 3, 1/2) = 1.
    assert final["p_value"] == pytest.approx(1.0)
    assert final["low_pp"] <= 25.0 <= final["high_pp"]
    assert gaps[("R3", "deception", "event")]["estimate_pp"] == pytest.approx(50.0)
    assert gaps[("R3", "deception", "source")]["estimate_pp"] == pytest.approx(0.0)
    assert gaps[("R3", "key_message_kind", "broadcast")]["n"] == 1
    assert gaps[("R3", "key_message_kind", "direct")]["estimate_pp"] == pytest.approx(100 / 3)
    assert gaps[("T1", "all", "all")]["estimate_pp"] == pytest.approx(50.0)  # s1, s3
    (share,) = metrics["gap_at_T1"]
    assert share["share"] == pytest.approx(2.0)  # 50 pp at T1 over 25 pp at R3


def test_paired_gaps_of_every_measure_at_r3() -> None:
    metrics = metrics_of(tables(*RUNS))
    gaps = {
        g["measure"]: g
        for g in metrics["condition_gaps"]
        if (g["checkpoint"], g["split"]) == ("R3", "all")
    }
    assert set(gaps) == {
        "truth_majority",
        "decoy_majority",
        "no_consensus",
        "true_vote_share",
        "decoy_vote_share",
    }
    assert {g["n"] for g in gaps.values()} == {4}  # one pair per story
    # Decoy majority at R3: C0 none; C1 s1 -> C0 - C1 = -1, 0, 0, 0: -25 pp; one discordant
    # story, exact McNemar p = 1.
    decoy = gaps["decoy_majority"]
    assert decoy["estimate_pp"] == pytest.approx(-25.0) and decoy["p_value"] == pytest.approx(1.0)
    # No consensus: C0 s4, C1 s3 -> 0, 0, -1, +1: 0 pp.
    assert gaps["no_consensus"]["estimate_pp"] == pytest.approx(0.0)
    # True-vote share of the analysed four: C0 1, 1, 3/4, 0; C1 0, 3/4, 0, 1 (s3 C1: S and A
    # unreadable) -> 1, 1/4, 3/4, -1: +25 pp, Wilcoxon signed-rank.
    true = gaps["true_vote_share"]
    assert true["estimate_pp"] == pytest.approx(25.0) and true["test"] == "wilcoxon_signed_rank"
    assert true["p_value"] == pytest.approx(stats.wilcoxon([1, 0.25, 0.75, -1]).pvalue)
    # Decoy-vote share: C0 all 0; C1 1, 0, 1/2, 0 -> -1, 0, -1/2, 0: -37.5 pp; the zeros drop.
    decoy_share = gaps["decoy_vote_share"]
    assert decoy_share["estimate_pp"] == pytest.approx(-37.5)
    assert decoy_share["p_value"] == pytest.approx(stats.wilcoxon([-1, -0.5]).pvalue)
    # Every checkpoint gets every measure; the stories are all Hi-ToM ones.
    assert {(g["checkpoint"], g["measure"]) for g in metrics["condition_gaps"]} == {
        (c, m) for c in ("T0", "T1", "R1", "R2", "R3") for m in gaps
    }
    sources = [g for g in metrics["condition_gaps"] if g["split"] == "source"]
    assert {(g["level"], g["n"]) for g in sources} == {("hitom", 4)}


def test_truncated_votes_are_counted_as_such() -> None:
    run = conversation("s1", "C0", votes("uuuuu", "tcttt", "tcttt"))
    metrics = metrics_of(tables(run))
    assert (metrics["truncated_votes"], metrics["failed_votes"]) == (4, 0)  # S at T1, R1..R3
    r3 = rate(metrics, "C0", "R3")
    assert r3["truncated_share"] == 1 / 4 and r3["failed_share"] == 0
    assert r3["truth"]["k"] == 1  # A, B, C: three true votes still make a majority
    assert vote_kind(None, "red", "blue", "truncated") == "truncated"


def test_no_gap_is_reported_with_its_reason() -> None:
    same = [
        conversation("s1", "C0", votes("uuuuu", "ttttt", "ttttt")),
        conversation("s1", "C1", votes("uuuuu", "ttttt", "ttttt")),
    ]
    (share,) = metrics_of(tables(*same))["gap_at_T1"]
    assert share["share"] is None and share["reason"] == "no gap at the final checkpoint"


def test_between_models_paired_by_story() -> None:
    runs = [
        *RUNS[:4],
        conversation("s1", "C0", votes("uuuuu", "ttttt", "ttttt"), model="sim/b"),
        conversation("s1", "C1", votes("uuuuu", "ttttt", "ttttt"), model="sim/b"),
        conversation("s2", "C0", votes("uuuuu", "ttttt", "ttttt"), model="sim/b"),
        conversation("s2", "C1", votes("uuuuu", "ttttt", "ttttt"), model="sim/b"),
    ]
    comparisons = {c["measure"]: c for c in metrics_of(tables(*runs))["between_models"]}
    # C1 truth at R3: a has s1 0, s2 1; b has 1, 1 -> a - b = -50 pp over 2 stories.
    c1 = comparisons["truth majority C1"]
    assert (c1["model_a"], c1["model_b"], c1["n"]) == ("sim/a", "sim/b", 2)
    assert c1["estimate_pp"] == pytest.approx(-50.0)
    assert comparisons["truth majority C0"]["estimate_pp"] == pytest.approx(0.0)
    # Gaps: a has s1 1, s2 0; b has 0, 0 -> +50 pp; sign test on one non-zero difference: p = 1.
    gap = comparisons["C0 - C1 gap"]
    assert gap["estimate_pp"] == pytest.approx(50.0) and gap["test"] == "sign_test_exact"
    assert gap["p_value"] == pytest.approx(1.0)
    # Decoy-vote effect C1 - C0 per story at R3: a has s1 1 - 0, s2 0 - 0; b has 0, 0
    # -> a - b = 1, 0: +50 pp, Wilcoxon on the one non-zero difference.
    effect = comparisons["decoy-vote effect (C1 - C0)"]
    assert effect["estimate_pp"] == pytest.approx(50.0) and effect["n"] == 2
    assert effect["p_value"] == pytest.approx(stats.wilcoxon([1.0]).pvalue)


def test_observers_vote_at_every_checkpoint_from_t1() -> None:
    run = conversation(
        "s1",
        "C1",
        votes("uuuuu", "ddddd", "dttdd"),
        intervention="active_observers",
        observers={"T1": "uuu", "R1": "ttd", "R2": "ddt", "R3": "ttt"},
    )
    frame = checkpoint_outcomes(tables(run))
    observers = frame[frame["group"] == "observers"].set_index("checkpoint")["outcome"]
    # 2 of 3: UNKNOWN x3 none; t t d truth; d d t decoy; t t t truth.
    assert observers.to_dict() == {"T1": "none", "R1": "truth", "R2": "decoy", "R3": "truth"}
    every = frame[frame["group"] == "all"].set_index("checkpoint")
    # 4 of 7 with the analysed four at the same checkpoint (T1: d d d d; R1..R3: t t d d):
    # T1 4 decoy; R1 4 true; R2 4 decoy (d d + d d); R3 5 true.
    assert every["outcome"].to_dict() == {
        "T1": "decoy",
        "R1": "truth",
        "R2": "decoy",
        "R3": "truth",
    }
    assert (every.loc["R3", "true"], every.loc["R2", "decoy"]) == (5, 4)
    assert set(every["voters"]) == {7}


def test_observers_majority_and_all_seven() -> None:
    run = conversation(
        "s1",
        "C1",
        votes("uuuuu", "ddddd", "dttdd"),
        intervention="active_observers",
        observers={"obs": "ttd"},
    )
    frame = checkpoint_outcomes(tables(run)).set_index("group")
    assert frame.loc["observers", "outcome"] == "truth"  # 2 of 3
    assert frame.loc["observers", "checkpoint"] == "O3"
    # Participants at R3: S A B C = t t d d (none); all seven: t t d d + t t d = 4 true of 7.
    participants = frame[frame["checkpoint"] == "R3"].loc["participants"]
    assert participants["outcome"] == "none"
    assert (frame.loc["all", "true"], frame.loc["all", "voters"]) == (4, 7)
    assert frame.loc["all", "outcome"] == "truth"


def test_intervention_contrasts_paired_by_story() -> None:
    runs = [
        *RUNS,
        # False-Exit: s1 truth (C1 none had decoy), s2 decoy (C1 none had truth), s3 decoy.
        conversation("s1", "C1", votes("uuuuu", "ddddd", "ttttt"), intervention="false_exit"),
        conversation("s2", "C1", votes("uuuuu", "ddddd", "ddddd"), intervention="false_exit"),
        conversation("s3", "C1", votes("uuuuu", "ddddd", "ddddd"), intervention="false_exit"),
    ]
    found = {
        (c["arm"], c["reference"], c["outcome"]): c
        for c in metrics_of(tables(*runs))["intervention_contrasts"]
    }
    assert set(found) == {
        ("C1 false_exit", "C1 none", "truth"),
        ("C1 false_exit", "C1 none", "decoy"),
    }
    truth = found[("C1 false_exit", "C1 none", "truth")]
    # Truth at R3, false_exit vs none: s1 1 vs 0, s2 0 vs 1, s3 0 vs 0 -> 0 pp over 3 stories.
    assert truth["n"] == 3 and truth["estimate_pp"] == pytest.approx(0.0)
    decoy = found[("C1 false_exit", "C1 none", "decoy")]
    # Decoy: s1 0 vs 1, s2 1 vs 0, s3 1 vs 0 (s3 none had no consensus) -> +1/3.
    assert decoy["estimate_pp"] == pytest.approx(100 / 3)
    assert decoy["p_value"] == pytest.approx(1.0)  # 2 vs 1 discordant: 2 P(X <= 1 | 3) = 1


def test_unfinished_conversations_are_left_out_and_counted() -> None:
    built = tables(*RUNS[:2])
    built.conversations.loc[1, "status"] = "incomplete"
    metrics = metrics_of(built)
    assert (metrics["conversations"], metrics["not_done"]) == (1, 1)


def test_stats_match_scipy_and_statsmodels() -> None:
    assert wilson(0, 0)["n"] == 0 and math.isnan(wilson(0, 0)["estimate"])
    low, high = proportion_confint(7, 20, alpha=0.05, method="wilson")
    assert (wilson(7, 20)["low"], wilson(7, 20)["high"]) == pytest.approx((low, high))
    first = [1] * 9 + [0] * 2 + [1] * 5 + [0] * 4
    second = [0] * 9 + [1] * 2 + [1] * 5 + [0] * 4
    expected = mcnemar([[5, 9], [2, 4]], exact=True).pvalue
    assert mcnemar_exact(first, second) == pytest.approx(expected)
    assert mcnemar_exact(first, second) == pytest.approx(stats.binomtest(2, 11, 0.5).pvalue)
    assert mcnemar_exact([1, 0], [1, 0]) == 1.0
    differences = [0.5, -1, 2, 0, 3, 1]
    assert sign_test(differences) == pytest.approx(stats.binomtest(4, 5, 0.5).pvalue)
    result = paired_difference(first, second)
    assert result["estimate_pp"] == pytest.approx(100 * 7 / 20) and result["n"] == 20
    assert result["low_pp"] < result["estimate_pp"] < result["high_pp"]
    assert paired_difference([], [])["reason"] == "no paired units"


def test_paired_difference_says_why_there_is_no_test() -> None:
    same = paired_difference([1, 0, 1], [1, 0, 1])
    assert same["estimate_pp"] == 0.0 and same["n"] == 3
    assert math.isnan(same["p_value"])
    assert same["skipped"] == "no discordant pairs: the outcome never changed"
    zeros = paired_difference([0.5, 0.5], [0.5, 0.5], binary=False)
    assert zeros["skipped"] == "every paired difference is zero"
    assert paired_difference([1, 0], [0, 0])["skipped"] is None


def test_paired_difference_of_equal_samples_is_computed_once() -> None:
    first, second = [1, 1, 0, 1, 0, 1], [0, 1, 0, 0, 0, 1]
    _paired_difference.cache_clear()
    result = paired_difference(first, second)
    assert result["estimate_pp"] == pytest.approx(100 * 2 / 6) and result["n"] == 6
    result["n"] = -1  # the caller's copy: the remembered result stays as computed
    again = paired_difference([float(v) for v in first], tuple(second))
    assert again["n"] == 6 and again == {**result, "n": 6}
    assert _paired_difference.cache_info().hits == 1
    # The test is part of what is remembered: the same samples under Wilcoxon are new.
    assert paired_difference(first, second, test="wilcoxon")["test"] == "wilcoxon_signed_rank"
    assert _paired_difference.cache_info().misses == 2
    uncached = _paired_difference.__wrapped__(
        np.array(first, dtype=float).tobytes(),
        np.array(second, dtype=float).tobytes(),
        "mcnemar",
        0,
    )
    assert again == uncached


def outcome_row(
    item: str, condition: str, outcome: str, true: int, decoy: int, voters: int
) -> dict[str, Any]:
    return {
        "model": "m",
        "intervention": "none",
        "group": "participants",
        "checkpoint": "R3",
        "item_id": item,
        "deception": "event",
        "key_message_kind": "private",
        "source": "hitom",
        "condition": condition,
        "outcome": outcome,
        "true": true,
        "decoy": decoy,
        "voters": voters,
    }


def test_paired_frames_drop_a_story_only_for_the_measures_it_lacks() -> None:
    outcomes = pd.DataFrame(
        [
            outcome_row("s1", "C0", "truth", 4, 0, 4),
            outcome_row("s1", "C1", "decoy", 1, 3, 4),
            # s2 has no readable vote in C1: no share there, but a no-consensus outcome.
            outcome_row("s2", "C0", "truth", 3, 1, 4),
            outcome_row("s2", "C1", "none", 0, 0, 0),
            # s3 lacks C1 altogether; the R1 row and the observers are never paired here.
            outcome_row("s3", "C0", "truth", 4, 0, 4),
            {**outcome_row("s1", "C0", "decoy", 0, 4, 4), "checkpoint": "R1"},
            {**outcome_row("s1", "C1", "truth", 4, 0, 4), "group": "observers"},
        ]
    )
    frames = _paired_frames(outcomes, "m", "R3", list(MEASURES))
    pairs = {m: list(zip(f["item_id"], f["C0"], f["C1"], strict=True)) for m, f in frames.items()}
    assert pairs == {
        "truth_majority": [("s1", 1.0, 0.0), ("s2", 1.0, 0.0)],
        "decoy_majority": [("s1", 0.0, 1.0), ("s2", 0.0, 0.0)],
        "no_consensus": [("s1", 0.0, 0.0), ("s2", 0.0, 1.0)],
        "true_vote_share": [("s1", 1.0, 0.25)],
        "decoy_vote_share": [("s1", 0.0, 0.75)],
    }
    assert list(frames["true_vote_share"].columns) == [
        "item_id",
        "deception",
        "key_message_kind",
        "source",
        "C0",
        "C1",
    ]
    assert _paired_frames(outcomes, "m", "T0", ["truth_majority"])["truth_majority"].empty
