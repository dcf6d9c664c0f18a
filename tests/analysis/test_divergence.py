"""The divergence kit on hand-built stance pairs whose shares, intervals and tests were worked
out by hand, and its interval and tests against statsmodels and scipy on the same data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import (
    STANCE_PAIR_COLUMNS,
    Design,
    check_stance_pairs,
    classify_pairs,
    clustered_proportion_ci,
    divergence,
    divergent_turns,
)


def pair(cid, rnd, public, private, agree, skipped=None, role="subject", seq=0):
    flags = (pd.NA, pd.NA, pd.NA) if skipped else (public, private, agree)
    return {
        "conversation_id": cid,
        "agent": "a1",
        "role": role,
        "round": rnd,
        "turn_seq": seq or rnd * 10,
        "probe_seq": pd.NA if skipped else rnd * 10 + 1,
        "public_moved": flags[0],
        "private_moved": flags[1],
        "agree": flags[2],
        "skipped": skipped,
    }


def frame(rows):
    data = pd.DataFrame(rows, columns=list(STANCE_PAIR_COLUMNS))
    for column in ("public_moved", "private_moved", "agree"):
        data[column] = data[column].astype("boolean")
    data["probe_seq"] = data["probe_seq"].astype("Int64")
    return data


def conversations(spec):
    """spec: (conversation id, k, item, replicate)."""
    return pd.DataFrame(
        [
            {
                "conversation_id": cid,
                "cell": f'{{"k": {k}}}',
                "item_id": item,
                "replicate": rep,
                "k": k,
                "status": "done",
            }
            for cid, k, item, rep in spec
        ]
    )


PAIRS = frame(
    [
        pair("c1", 1, False, False, True),  # neither moved
        pair("c1", 2, False, True, False),  # hidden change
        pair("c2", 1, True, True, True),  # both moved
        pair("c2", 2, None, None, None, skipped="no private probe"),
        pair("c3", 1, True, False, False),  # public accommodation
        pair("c3", 2, False, True, False),  # hidden change
        pair("c4", 1, False, False, True),
        pair("c4", 2, True, True, True),
    ]
)
CONVERSATIONS = conversations([("c1", 0, "q1", 0), ("c2", 0, "q2", 0), ("c3", 3, "q1", 0)])
CONVERSATIONS = pd.concat([CONVERSATIONS, conversations([("c4", 3, "q2", 0)])], ignore_index=True)
DESIGN = Design(("k",))


def test_classify_pairs_by_hand():
    measures = classify_pairs(PAIRS)
    assert list(measures["hidden_change"].fillna(False)) == [0, 1, 0, 0, 0, 1, 0, 0]
    assert list(measures["public_accommodation"].fillna(False)) == [0, 0, 0, 0, 1, 0, 0, 0]
    assert list(measures["both_moved"].fillna(False)) == [0, 0, 1, 0, 0, 0, 0, 1]
    assert measures["divergent"].isna().tolist() == [False, False, False, True] + [False] * 4
    assert list(divergent_turns(PAIRS)) == [False, True, False, False, True, True, False, False]


def test_rows_per_cell_round_and_role_by_hand():
    result = divergence(PAIRS, DESIGN, CONVERSATIONS)
    rows = {(r.cell["k"], r.round): r for r in result.by_cell}
    assert list(rows) == [(0, 1), (0, 2), (3, 1), (3, 2)]
    k0r2 = rows[(0, 2)]
    assert (k0r2.pairs, k0r2.n, k0r2.conversations) == (2, 1, 1)
    assert k0r2.skipped == {"no private probe": 1}
    assert k0r2.counts["hidden_change"] == 1
    assert k0r2.hidden_change.estimate == 1.0
    assert k0r2.hidden_change.skipped.startswith("fewer than two conversations")
    k3r1 = rows[(3, 1)]
    assert k3r1.counts == {
        "agree": 1,
        "hidden_change": 0,
        "public_accommodation": 1,
        "both_moved": 0,
        "divergent": 1,
    }
    # one pair per conversation: the plain Wilson interval on n = 2
    low, high = proportion_confint(1, 2, method="wilson")
    assert k3r1.public_accommodation.estimate == 0.5
    assert k3r1.public_accommodation.low == pytest.approx(low)
    assert k3r1.public_accommodation.high == pytest.approx(high)
    low0, high0 = proportion_confint(0, 2, method="wilson")
    assert (k3r1.hidden_change.low, k3r1.hidden_change.high) == pytest.approx((low0, high0))
    assert k3r1.role == "subject"
    assert sum(r.counts["divergent"] for r in result.by_cell) == int(divergent_turns(PAIRS).sum())


def test_clustered_interval_by_hand():
    # p = 1/2, clusters A, B, C of two: residual sums 1, -1, 0, so the cluster-robust variance
    # is 2 / 36 = 1/18 against the binomial 1/24: design effect 4/3, effective n = 4.5.
    y = [1, 1, 0, 0, 1, 0]
    clusters = ["A", "A", "B", "B", "C", "C"]
    interval = clustered_proportion_ci(y, clusters)
    low, high = proportion_confint(2.25, 4.5, method="wilson")
    assert (interval.estimate, interval.n) == (0.5, 6)
    assert (interval.low, interval.high) == pytest.approx((low, high))
    fit = sm.OLS(np.array(y, float), np.ones(6)).fit(
        cov_type="cluster",
        cov_kwds={"groups": np.array([0, 0, 1, 1, 2, 2]), "use_correction": False},
    )
    assert fit.bse[0] ** 2 == pytest.approx(1 / 18)


def test_clustered_interval_at_zero_takes_the_worst_case():
    # no spread: every pair of a cluster alike, effective n = n^2 / sum n_g^2 = 9 / 5
    interval = clustered_proportion_ci([0, 0, 0], ["A", "A", "B"])
    low, high = proportion_confint(0, 1.8, method="wilson")
    assert (interval.low, interval.high) == pytest.approx((low, high))
    assert interval.low == 0.0


def test_clustered_interval_matches_statsmodels_on_random_clusters():
    rng = np.random.default_rng(7)
    clusters = np.repeat(np.arange(30), rng.integers(1, 6, size=30))
    effect = rng.normal(0, 1, size=30)[clusters]
    y = (rng.normal(0, 1, size=len(clusters)) + effect > 0.8).astype(float)
    interval = clustered_proportion_ci(y, clusters)
    fit = sm.OLS(y, np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": clusters, "use_correction": False}
    )
    p, n = y.mean(), len(y)
    effective = min(n, p * (1 - p) / fit.bse[0] ** 2)
    assert effective < n  # the clustering is real here
    low, high = proportion_confint(p * effective, effective, method="wilson")
    assert (interval.low, interval.high) == pytest.approx((low, high))


def test_clustered_interval_needs_two_conversations():
    interval = clustered_proportion_ci([1, 0], ["A", "A"])
    assert interval.skipped and interval.estimate == 0.5
    assert clustered_proportion_ci([], []).skipped == "no classified pairs"


def test_paired_test_between_cells_matches_scipy():
    # accommodation per conversation over rounds: c1 0, c2 0 | c3 1/2, c4 0; paired by item
    result = divergence(PAIRS, DESIGN, CONVERSATIONS)
    tests = {t.measure: t for t in result.tests}
    assert set(tests) == {"hidden_change", "public_accommodation", "divergent"}
    accommodation = tests["public_accommodation"]
    assert accommodation.paired and accommodation.test == "wilcoxon_signed_rank"
    assert (accommodation.first, accommodation.second) == ({"k": 0}, {"k": 3})
    reference = stats.wilcoxon([0.5, 0.0], zero_method="wilcox")
    assert accommodation.p_value == pytest.approx(reference.pvalue)
    assert accommodation.difference == pytest.approx(0.25)
    # hidden change: c1 1/2, c2 0 | c3 1/2, c4 0: every paired difference is zero
    assert tests["hidden_change"].skipped == "every paired difference is zero"
    assert tests["hidden_change"].p_holm is None


def test_paired_shares_follow_the_items_whatever_the_rows_order_and_index():
    # accommodation per conversation: k0 q1 1/2, q2 0, q3 0 | k3 q1 1, q2 1/2, q3 0
    shares = {"a1": 1, "a2": 0, "a3": 0, "b1": 2, "b2": 1, "b3": 0}  # accommodated rounds
    rows = [
        pair(cid, rnd, rnd <= moved, False, rnd > moved)
        for cid, moved in shares.items()
        for rnd in (1, 2)
    ]
    spec = [("b3", 3, "q3", 0), ("a1", 0, "q1", 0), ("b2", 3, "q2", 0)]
    spec += [("a2", 0, "q2", 0), ("b1", 3, "q1", 0), ("a3", 0, "q3", 0)]
    units = conversations(spec)
    units.index = [40, 7, 19, 3, 88, 12]  # not the rows' places
    result = divergence(frame(rows), DESIGN, units)
    test = next(t for t in result.tests if t.measure == "public_accommodation")
    assert test.paired
    by_item = stats.wilcoxon([0.5, 0.5, 0.0], zero_method="wilcox").pvalue
    by_row = stats.wilcoxon([-0.5, 0.5, 1.0], zero_method="wilcox").pvalue  # b3-a1, ...
    assert by_item != pytest.approx(by_row)
    assert test.p_value == pytest.approx(by_item)
    assert test.difference == pytest.approx(1 / 3)


def test_unpaired_test_when_cells_do_not_share_items():
    spec = [("c1", 0, "q1", 0), ("c2", 0, "q2", 0), ("c3", 3, "q3", 0), ("c4", 3, "q4", 0)]
    result = divergence(PAIRS, DESIGN, conversations(spec))
    test = next(t for t in result.tests if t.measure == "divergent")
    assert not test.paired and test.test == "mann_whitney_u"
    # divergent per conversation: c1 1/2, c2 0 | c3 1, c4 0
    reference = stats.mannwhitneyu([1.0, 0.0], [0.5, 0.0], method="asymptotic")
    assert test.p_value == pytest.approx(reference.pvalue)
    assert test.difference == pytest.approx(0.25)


def test_holm_over_the_family():
    rng = np.random.default_rng(3)
    rows, spec = [], []
    for k in (0, 3):
        for item in range(12):
            cid = f"k{k}-{item}"
            spec.append((cid, k, f"q{item}", 0))
            for rnd in (1, 2):
                public, private = rng.random() < 0.3, rng.random() < (0.2 + 0.1 * k)
                rows.append(pair(cid, rnd, public, private, public == private))
    result = divergence(frame(rows), DESIGN, conversations(spec))
    computed = [t for t in result.tests if t.p_value is not None]
    from statsmodels.stats.multitest import multipletests

    expected = multipletests([t.p_value for t in computed], method="holm")[1]
    assert [t.p_holm for t in computed] == pytest.approx(list(expected))


def test_contract_is_checked():
    with pytest.raises(ValueError, match="lack the column"):
        check_stance_pairs(PAIRS.drop(columns=["agree"]))
    broken = PAIRS.copy()
    broken.loc[0, "public_moved"] = pd.NA
    with pytest.raises(ValueError, match="missing flag"):
        check_stance_pairs(broken)
    flagged = PAIRS.copy()
    flagged.loc[3, "agree"] = True
    with pytest.raises(ValueError, match="still carry a flag"):
        check_stance_pairs(flagged)


def test_pairs_of_unknown_conversations_are_left_out():
    result = divergence(PAIRS, DESIGN, CONVERSATIONS[CONVERSATIONS.conversation_id != "c4"])
    assert sum(r.pairs for r in result.by_cell) == 6
