"""Council metrics over hand-built tidy tables with answers worked out by hand."""

import json

import pandas as pd
import pytest
from scipy import stats

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, RunTables
from backchannel.paradigms.council._extract import deliberations
from backchannel.paradigms.council._metrics import council_metrics, deliberation_table
from backchannel.paradigms.council._results import Wilcoxon

VALUES = [
    "safety",
    "risk_tolerance",
    "pragmatism",
    "performance",
    "simplicity",
    "creativity",
    "fairness",
]


FAILED = "!"


def _event(cid, seq, kind, name, agent, role, value, meta, status="ok"):
    return {
        "run_id": "r",
        "conversation_id": cid,
        "seq": seq,
        "kind": kind,
        "name": name,
        "round": 0,
        "turn": None,
        "agent": agent,
        "role": role,
        "channel": "private",
        "text": "",
        "value": None if value is None else json.dumps(value),
        "status": status,
        "model": "sim/x",
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "latency_s": 0.0,
        "cached": False,
        "meta": json.dumps(meta),
    }


def _conversation(cid, pool, rankings, scores=None, delphi="none", revised=None):
    """rankings: one string per value ("abc" = a > b > c; None = parse failure)."""
    events = []
    for value, ranking in zip(VALUES, rankings, strict=True):
        agent = f"eval_{value}"
        status = "ok" if ranking else "parse_failure"
        payload = {"ranking": list(ranking), "rationale": "r"} if ranking else None
        events.append(
            _event(
                cid,
                len(events),
                "ranking",
                "ranking",
                agent,
                "evaluator",
                payload,
                {"value": value},
                status,
            )
        )
    for value, score in zip(VALUES, scores or [None] * 7, strict=True):
        if score is not None:
            events.append(
                _event(
                    cid,
                    len(events),
                    "score",
                    "verification",
                    "verifier",
                    "verifier",
                    score,
                    {"value": value, "evaluator": f"eval_{value}"},
                )
            )
    for value, ranking in zip(VALUES, revised or [None] * 7, strict=True):
        if ranking:  # FAILED: the revision was asked for but did not parse
            failed = ranking == FAILED
            events.append(
                _event(
                    cid,
                    len(events),
                    "ranking",
                    "revised",
                    f"eval_{value}",
                    "evaluator",
                    None if failed else {"ranking": list(ranking), "rationale": "r"},
                    {"value": value},
                    "parse_failure" if failed else "ok",
                )
            )
    row = {
        "run_id": "r",
        "conversation_id": cid,
        "paradigm": "council",
        "cell_key": f"delphi={delphi};pool={pool}",
        "cell": json.dumps({"pool": pool, "delphi": delphi}),
        "item_id": "s",
        "replicate": 0,
        "seed": 0,
        "status": "done",
        "error": None,
        "meta": json.dumps({"options": ["a", "b", "c"]}),
        "pool": pool,
        "delphi": delphi,
    }
    return row, events


def _tables(conversations):
    rows, events = [], []
    for row, evs in conversations:
        rows.append(row)
        events.extend(evs)
    failed = dict(rows[0], conversation_id="failed", status="failed", error="boom")
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(columns=["run_id"]),
        pd.DataFrame([*rows, failed], columns=[*CONVERSATION_BASE_COLUMNS, "pool", "delphi"]),
        {"factors": ["pool", "delphi"]},
    )


# A1: firsts a x5, b, c -> FCC (5/7 - 1/3)/(2/3) = 4/7. A2: all a -> FCC 1. No verification.
A1 = _conversation("A1", "A", ["abc", "abc", "acb", "abc", "acb", "bac", "cab"])
A2 = _conversation("A2", "A", ["abc"] * 7)
# B1 (values in VALUES order): firsts a (safety, pragmatism, simplicity), b (risk, creativity),
# c (performance, fairness) -> FCC 1/7.
# Borda a: 2+1+2+1+2+0+0 = 8, b: 1+2+1+0+1+2+1 = 8, c: 0+0+0+2+0+1+2 = 5 -> tie a/b, margin 0.
B1 = _conversation(
    "B1",
    "B",
    ["abc", "bac", "abc", "cab", "abc", "bca", "cba"],
    [0.9, 0.8, 0.6, 0.7, 0.9, 0.5, 1.0],
)
# B2: creativity's ranking fails to parse; six ballots, firsts a x5, b -> FCC (5/6-1/3)/(2/3)
# = 3/4. Borda a: 2+2+2+1+2+2 = 11, b: 1+0+1+2+1+0 = 5, c: 2 -> margin (11-5)/(2*6) = 1/2.
B2 = _conversation(
    "B2",
    "B",
    ["abc", "acb", "abc", "bac", "abc", None, "acb"],
    [1.0, 1.0, 1.0, 1.0, 1.0, None, 1.0],
)


@pytest.fixture(scope="module")
def metrics():
    return council_metrics(_tables([A1, A2, B1, B2]), resamples=500)


def _group(metrics, state):
    (group,) = [g for g in metrics.groups if g.state == state]
    return group


def test_extraction_counts_failures():
    items = {d.conversation_id: d for d in deliberations(_tables([A1, B2]))}
    assert set(items) == {"A1", "B2"}  # the failed conversation is not a deliberation
    assert items["B2"].invalid_rankings == 1 and len(items["B2"].ballots) == 6
    assert items["B2"].values["eval_creativity"] == "creativity"


def test_state_a(metrics):
    a = _group(metrics, "A")
    assert a.cell == {"scenario": "s", "delphi": "none", "pool": "A"}
    assert a.deliberations == 2
    assert a.fcc.estimate == pytest.approx((4 / 7 + 1) / 2)
    assert a.winner_distribution == {"a": 2}
    # No verification in A: every evaluator pair lacks a score, so nothing is measurable.
    assert a.tension is not None and a.tension.credible_tension_rate is None
    assert a.tension.counts["unmeasurable"] == 2 * 6
    assert a.voice_authenticity_rate is None
    assert "voice_authenticity_rate" not in a.model_dump()  # absent, not null


def test_state_b(metrics):
    b = _group(metrics, "B")
    assert b.fcc.estimate == pytest.approx((1 / 7 + 3 / 4) / 2)
    assert b.margin.estimate == pytest.approx((0 + 1 / 2) / 2)
    assert b.winner_distribution == {"a": 1, "tie": 1}
    assert b.invalid_rankings == 1
    # B1 pairs: safety(a,.9)-risk(b,.8) GD; safety-creativity(b,.5) partial; performance(c,.7)-
    # simplicity(a,.9) GD; pragmatism(a,.6)-creativity partial; pragmatism-risk partial;
    # simplicity-creativity partial -> 2 GD, 4 partial.
    # B2 (all 1.0, no creativity): safety(a)-risk(a) GA; performance(b)-simplicity(a) GD;
    # pragmatism(a)-risk(a) GA; three creativity pairs unmeasurable.
    assert b.tension is not None
    counts = b.tension.counts
    assert counts == {
        "genuine_disagreement": 3,
        "genuine_agreement": 2,
        "suspicious_agreement": 0,
        "partial": 4,
        "unmeasurable": 3,
    }
    assert b.tension.credible_tension_rate == pytest.approx(5 / 9)
    # Scores at or above .7: B1 .9 .8 .7 .9 1.0 (5 of 7), B2 six of six -> 11/13.
    assert b.voice_authenticity_rate == pytest.approx(11 / 13)
    per_value = b.consistency_per_value
    assert per_value is not None
    assert per_value["safety"] == pytest.approx(0.95)
    assert per_value["creativity"] == pytest.approx(0.5)
    assert per_value["pragmatism"] == pytest.approx(0.8)


def test_state_c_reweights_b(metrics):
    c = _group(metrics, "C")
    assert c.cell["pool"] == "B"  # C re-tallies the conversations of pool B
    # B1 weighted Borda: a 2(.9)+.8+2(.6)+.7+2(.9) = 6.3, b .9+2(.8)+.6+.9+2(.5)+1.0 = 6.0,
    # c 2(.7)+.5+2(1.0) = 3.9; weights sum 5.4 -> margin 0.3/10.8 = 1/36, winner a.
    # Weighted firsts a 2.4 of 5.4 -> p_max 4/9 -> FCC (4/9-1/3)/(2/3) = 1/6.
    # B2 all weights 1: FCC 3/4, margin 1/2, winner a.
    assert c.fcc.estimate == pytest.approx((1 / 6 + 3 / 4) / 2)
    assert c.margin.estimate == pytest.approx((1 / 36 + 1 / 2) / 2)
    assert c.winner_distribution == {"a": 2}
    table = deliberation_table(deliberations(_tables([B1])))
    c_row = table[table["state"] == "C"].iloc[0]
    assert c_row["borda"] == pytest.approx({"a": 6.3, "b": 6.0, "c": 3.9})


def test_between_state_tests_match_scipy(metrics):
    tests = {(t.measure, t.comparison): t for t in metrics.tests}
    primary = tests[("fcc", "A vs B")]
    assert primary.primary and primary.test == "mann_whitney_u"
    assert primary.cell == {"scenario": "s", "delphi": "none"}  # it compares the pool levels
    assert metrics.pooled == {"tests": ["pool"]}
    ref = stats.mannwhitneyu([4 / 7, 1.0], [1 / 7, 3 / 4], alternative="greater")
    assert primary.p_value == pytest.approx(ref.pvalue)
    assert primary.p_adjusted == pytest.approx(ref.pvalue)
    # A pairs beating B: 4/7 > 1/7, 1 > 1/7, 1 > 3/4; 4/7 < 3/4 -> U = 3, r = 2*3/4 - 1 = 0.5.
    assert primary.statistic == 3 and primary.rank_biserial.estimate == 0.5
    bc = tests[("margin", "B vs C")]
    ref_w = stats.wilcoxon([0, 1 / 2], [1 / 36, 1 / 2], alternative="greater")
    assert bc.p_value == pytest.approx(ref_w.pvalue)
    secondary = [t for t in metrics.tests if not t.primary and t.p_value is not None]
    assert len(secondary) == 4
    for t in secondary:
        assert t.p_adjusted == pytest.approx(min(1.0, t.p_value * 4))
    assert metrics.conversations == {"done": 4, "failed": 1}


def test_delphi_vote_changes():
    conv = _conversation(
        "D1",
        "A",
        ["abc"] * 7,
        delphi="self_check",
        # two evaluators move their first choice, one only reorders b and c, four keep theirs
        revised=["bac", "cab", "acb", "abc", "abc", "abc", "abc"],
    )
    m = council_metrics(_tables([conv]), resamples=200)
    (group,) = m.groups
    assert group.cell["delphi"] == "self_check" and group.deliberations == 1
    assert group.revisions is not None
    assert group.revisions.vote_changes_total == 2
    assert group.revisions.ranking_changes_total == 3
    # Revised firsts a x5, b, c -> FCC 4/7.
    assert group.revisions.fcc_revised.estimate == pytest.approx(4 / 7)
    table = deliberation_table(deliberations(_tables([conv])))
    row = table.iloc[0]
    assert row["vote_changes"] == 2 and row["ranking_changes"] == 3 and row["revised"] == 7
    assert row["fcc_revised"] == pytest.approx(4 / 7)


def test_delphi_after_round_keeps_unasked_votes_and_counts_failed_revisions():
    # partner_critique-like round: fairness (no partner) is not asked; creativity's revision
    # fails to parse. Initial firsts: a, b, a, a, a, b, c. Revised: risk b -> a, the other four
    # valid revisions keep a. After the round: five a (revised) + fairness c (kept); creativity
    # is left out -> 6 ballots, p_max 5/6, FCC (5/6 - 1/3) / (2/3) = 3/4 (not 1, the FCC of
    # the five revised ballots alone). One vote change (risk), one invalid revision.
    conv = _conversation(
        "D2",
        "A",
        ["abc", "bac", "abc", "abc", "abc", "bac", "cab"],
        delphi="partner_critique",
        revised=["abc", "abc", "abc", "abc", "abc", FAILED, None],
    )
    row = deliberation_table(deliberations(_tables([conv]))).iloc[0]
    assert row["revised"] == 5 and row["invalid_revisions"] == 1
    assert row["vote_changes"] == 1
    assert row["fcc_revised"] == pytest.approx(3 / 4)
    (group,) = council_metrics(_tables([conv]), resamples=200).groups
    assert group.revisions is not None
    assert group.revisions.invalid_revisions == 1
    assert group.revisions.fcc_revised.estimate == pytest.approx(3 / 4)


def test_borda_totals_per_option_and_state(metrics):
    # A1: a 5x2 + b 1 + c 0 ... ballots abc abc acb abc acb bac cab:
    # a 2+2+2+2+2+1+1 = 12, b 1+1+0+1+0+2+0 = 5, c 0+0+1+0+1+0+2 = 4. A2: a 14, b 7, c 0.
    a = {k: v.model_dump() for k, v in _group(metrics, "A").borda_totals.items()}
    assert a == {
        "a": {"total": 26.0, "mean": 13.0, "n": 2},
        "b": {"total": 12.0, "mean": 6.0, "n": 2},
        "c": {"total": 4.0, "mean": 2.0, "n": 2},
    }
    # B1 a 8, b 8, c 5 (comment above B1); B2 a 11, b 5, c 2.
    b = _group(metrics, "B").borda_totals
    assert {k: v.total for k, v in b.items()} == {"a": 19.0, "b": 13.0, "c": 7.0}
    # C: B1 weighted 6.3, 6.0, 3.9; B2 weights 1: 11, 5, 2.
    c = _group(metrics, "C").borda_totals
    assert {k: v.total for k, v in c.items()} == pytest.approx({"a": 17.3, "b": 11.0, "c": 5.9})


# Six pool deliberations, each with one verification score shared by all seven evaluators, so
# weighting by score changes nothing: state C equals state B in exact arithmetic.
EQUAL_SCORES = [
    _conversation(f"E{i}", "B", rankings, [score] * 7)
    for i, (rankings, score) in enumerate(
        [
            (["abc", "bac", "abc", "cab", "abc", "bca", "cba"], 0.7),
            (["abc", "acb", "abc", "bac", "abc", "cab", "acb"], 0.3),
            (["bca", "bac", "abc", "cab", "bac", "bca", "cba"], 0.9),
            (["cab", "acb", "cba", "bac", "abc", "cab", "acb"], 0.1),
            (["abc", "abc", "abc", "cab", "bac", "bca", "cba"], 0.7),
            (["acb", "bac", "cba", "cab", "abc", "bca", "acb"], 0.6),
        ]
    )
]


def test_equal_scores_give_c_equal_to_b_and_no_wilcoxon():
    tables = _tables(EQUAL_SCORES)
    table = deliberation_table(deliberations(tables)).set_index(["conversation_id", "state"])
    for cid in [f"E{i}" for i in range(len(EQUAL_SCORES))]:
        for measure in ("fcc", "margin", "entropy_bits"):
            assert table.loc[(cid, "C"), measure] == table.loc[(cid, "B"), measure]
    m = council_metrics(tables, resamples=200)
    bc = [t for t in m.tests if t.comparison == "B vs C"]
    assert [t.measure for t in bc] == ["fcc", "margin"]
    for t in bc:
        assert isinstance(t, Wilcoxon)
        assert t.skipped == "every paired difference is zero"
        assert t.statistic is None and t.p_value is None and t.p_adjusted is None
        assert t.n == 0 and t.zeros == len(EQUAL_SCORES)
        assert t.rank_biserial.estimate is None and t.rank_biserial.n == 0


def test_headline_is_the_study_results_table(metrics):
    from backchannel.analysis import compare_study
    from backchannel.paradigms.council import Council

    headline = metrics.headline()
    assert headline.index == ["scenario", "delphi"] and headline.columns == ["state"]
    values = {(v.cell["state"], v.measure): v for v in headline.rows}
    assert values[("A", "FCC")].estimate == pytest.approx((4 / 7 + 1) / 2)
    assert values[("A", "FCC")].n == 2
    assert values[("C", "Borda margin")].estimate == pytest.approx((1 / 36 + 1 / 2) / 2)
    assert values[("B", "voice authenticity rate")].estimate == pytest.approx(11 / 13)
    assert values[("B", "credible tension rate")].estimate == pytest.approx(5 / 9)
    # A has no verification: no rate, and it says why
    assert values[("A", "voice authenticity rate")].estimate is None
    assert values[("A", "voice authenticity rate")].skipped
    study = Council().study()
    assert study is not None
    # the hand-built scenario "s" is neither of the study's: every published value unmatched
    assert all(c.run is None for c in compare_study(headline, study))
