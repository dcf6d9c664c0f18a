"""The validity kit on hand-built runs whose figures are worked out by hand: awareness per cell
and role with its failures, the order checks against chance, and the exact test against
scipy's binomial test and a brute-force enumeration."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    ORDER_COLUMNS,
    RunTables,
    order_check,
    poisson_binomial_pmf,
    poisson_binomial_test,
    validity,
)
from backchannel.analysis._validity import answer_outcomes


def _tables(
    events: list[dict[str, Any]], labels: list[tuple[str, int, str | None, str]]
) -> RunTables:
    """Conversations c1, c2 (k = 1) and c3 (k = 2), all done; the events and labels given."""
    conversations = pd.DataFrame(
        [
            {
                **dict.fromkeys(CONVERSATION_BASE_COLUMNS),
                "conversation_id": cid,
                "status": "done",
                "cell": json.dumps({"k": k}),
                "meta": "{}",
                "k": k,
            }
            for cid, k in (("c1", 1), ("c2", 1), ("c3", 2))
        ]
    )
    frame = pd.DataFrame(
        [{**dict.fromkeys(EVENT_COLUMNS), "channel": "private", "meta": "{}", **e} for e in events],
        columns=EVENT_COLUMNS,
    )
    label_frame = pd.DataFrame(
        [
            {**dict.fromkeys(LABEL_COLUMNS), "conversation_id": c, "event_seq": s, "label": lab}
            | {"judge": "awareness", "status": status}
            for c, s, lab, status in labels
        ],
        columns=LABEL_COLUMNS,
    )
    return RunTables(frame, label_frame, conversations, {"factors": ["k"]})


def _probe(cid: str, seq: int, role: str = "honest", status: str = "ok") -> dict[str, Any]:
    return {
        "conversation_id": cid,
        "seq": seq,
        "kind": "probe",
        "name": "awareness",
        "agent": f"A{seq}",
        "role": role,
        "status": status,
        "round": 2,
    }


def test_awareness_counts_aware_verdicts_over_valid_ones_and_every_failure() -> None:
    events = [
        _probe("c1", 1),
        _probe("c1", 2),
        _probe("c2", 1),
        _probe("c2", 2, status="refusal"),
        _probe("c3", 1),
        _probe("c3", 2),
        # Another probe and another judge's label are not awareness.
        {**_probe("c1", 3), "name": "answer"},
    ]
    labels = [
        ("c1", 1, "aware", "ok"),
        ("c1", 2, "unaware", "ok"),
        ("c2", 1, "aware", "ok"),
        ("c3", 1, None, "parse_failure"),
    ]
    found = validity(_tables(events, labels), None)
    rows = {row.cell["k"]: row for row in found.awareness}
    # k = 1: four asked, one refused; 2 aware of 3 judged.
    one = rows[1]
    assert (one.role, one.n_asked, one.n_judged, one.n_aware) == ("honest", 4, 3, 2)
    low, high = proportion_confint(2, 3, method="wilson")
    assert one.rate == pytest.approx(2 / 3)
    assert (one.low, one.high) == (pytest.approx(low), pytest.approx(high))
    assert one.failures == {"probe: refusal": 1}
    # k = 2: one failed verdict, one never judged: no rate, both reasons counted.
    two = rows[2]
    assert (two.n_asked, two.n_judged, two.rate, two.low) == (2, 0, None, None)
    assert two.failures == {"judge: parse_failure": 1, "not judged": 1}
    assert found.order == [] and found.order_skipped
    assert found.awareness_skipped is None


def test_without_awareness_probes_the_section_says_why() -> None:
    found = validity(_tables([{**_probe("c1", 1), "name": "answer"}], []), "no judge labels")
    assert found.awareness == [] and "not asked" in str(found.awareness_skipped)
    assert found.order_skipped == "no judge labels"


def _answers(rows: list[tuple[str, Any, Any, Any]]) -> pd.DataFrame:
    """(conversation, options, speakers, answer) rows as `order_answers` returns them."""
    return pd.DataFrame(
        [
            {
                "conversation_id": cid,
                "seq": i,
                "agent": f"A{i}",
                "role": "evaluator",
                "options": options,
                "speakers": speakers,
                "answer": answer,
            }
            for i, (cid, options, speakers, answer) in enumerate(rows)
        ],
        columns=list(ORDER_COLUMNS),
    )


ABC = ["a", "b", "c"]
ROWS = [
    ("c1", ABC, ["a", "b"], "a"),  # first option; first speaker (chance 1/2); not last (1/2)
    ("c1", ABC, ["b", "a", "a"], "a"),  # first option; not first (2/3); last (2/3)
    ("c2", ABC, None, "b"),  # no speakers: first-option check only
    ("c2", ABC, ["c"], "c"),  # not first option; first and last (chance 1)
    ("c2", ABC, ["a"], "z"),  # not an option; speakers: neither (chance 0)
    ("c2", ABC, ["a", "b"], None),  # no valid answer
    ("c3", None, ["a", "b"], "b"),  # another cell, speakers only
]


def test_the_order_checks_count_hits_against_chance_per_cell() -> None:
    tables = _tables([{**_probe(c, 1), "name": "x"} for c in ("c1", "c2", "c3")], [])
    found = validity(tables, _answers(ROWS))
    rows = {(row.cell["k"], row.check): row for row in found.order}
    assert set(rows) == {
        (1, "first_option"),
        (1, "first_speaker"),
        (1, "last_speaker"),
        (2, "first_speaker"),
        (2, "last_speaker"),
    }
    first = rows[(1, "first_option")]
    # Four valid answers among the options (a, a, b, c): two are the first option, chance 1/3.
    assert (first.n, first.hits, first.test) == (4, 2, "binomial")
    assert first.chance == pytest.approx(1 / 3)
    assert first.p_value == pytest.approx(binomtest(2, 4, 1 / 3).pvalue)
    assert first.excluded == {"answer not among the options": 1, "no valid answer": 1}
    speaker = rows[(1, "first_speaker")]
    # Hits: rows 1 and 4; chances 1/2, 2/3, 1, 0 (row 5's answer is nobody's position).
    assert (speaker.n, speaker.hits, speaker.test) == (4, 2, "poisson-binomial")
    assert speaker.chance == pytest.approx((1 / 2 + 2 / 3 + 1 + 0) / 4)
    # K = 1 + Bernoulli(1/2) + Bernoulli(2/3): P(1) = 1/6, P(2) = 1/2, P(3) = 1/3; 2 is the
    # likeliest count, so every count is as or less likely: p = 1.
    assert speaker.p_value == pytest.approx(1.0)
    last = rows[(1, "last_speaker")]
    assert (last.n, last.hits) == (4, 2)  # rows 2 and 4
    low, high = proportion_confint(2, 4, method="wilson")
    assert (last.rate, last.low, last.high) == (0.5, pytest.approx(low), pytest.approx(high))
    assert last.excluded == {"no valid answer": 1}
    other = rows[(2, "last_speaker")]
    assert (other.n, other.hits, other.chance) == (1, 1, 0.5)
    assert other.p_value == pytest.approx(1.0)


def test_a_check_without_valid_answers_is_skipped_and_one_that_applies_to_none_is_absent() -> None:
    answers = _answers([("c1", ABC, None, None)])
    row = order_check(answers, "first_option")
    assert row is not None and row["n"] == 0 and row["skipped"] == "no valid answers"
    assert order_check(answers, "first_speaker") is None
    with pytest.raises(ValueError, match="unknown order check"):
        order_check(answers, "middle_speaker")


def test_each_answer_takes_the_outcome_of_its_order_and_answer() -> None:
    shared = ["a", "b"]  # one list object for two rows, and an equal list of its own
    answers = _answers(
        [
            ("c1", shared, ["b", "a", "b"], "b"),  # not first option (1/2); last (2/3)
            ("c1", shared, None, "a"),  # first option; no speakers
            ("c1", ["a", "b"], ["b", "a", "b"], np.nan),  # no valid answer in either check
            ("c1", ("c", "a", "b"), [{"x": 1}], "a"),  # an option, not the first (1/3)
            ("c1", ["a"], ["b"], "c"),  # not an option; the answer is nobody's position
            ("c1", None, ["a"], "a"),  # no options; the last speaker (chance 1)
        ]
    )
    found = answer_outcomes(answers, ("first_option", "last_speaker"))
    counts, hits, chances = found["first_option"]
    # 0 nothing shown, 1 counted, 2 no valid answer, 3 not among the options
    assert counts.tolist() == [1, 1, 2, 1, 3, 0]
    assert hits.tolist() == [False, True, False, False, False, False]
    assert [chances[i] for i in (0, 1, 3)] == [0.5, 0.5, 1 / 3]
    counts, hits, chances = found["last_speaker"]
    assert counts.tolist() == [1, 0, 2, 1, 1, 1]
    counted = counts == 1
    assert hits[counted].tolist() == [True, False, False, True]
    assert chances[counted].tolist() == [2 / 3, 0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="unknown order check"):
        answer_outcomes(answers, ("middle_speaker",))


def test_the_order_checks_read_rows_by_position_whatever_the_index() -> None:
    tables = _tables([{**_probe(c, 1), "name": "x"} for c in ("c1", "c2", "c3")], [])
    plain = validity(tables, _answers(ROWS))
    shuffled = _answers(ROWS).set_axis([70, 3, 12, 5, 40, 1, 9])
    assert validity(tables, shuffled) == plain
    unknown = pd.concat([_answers([("c9", ABC, ["a"], "a")]), _answers(ROWS)])
    assert validity(tables, unknown) == plain  # no conversation c9: left out


@pytest.mark.parametrize(("hits", "n", "p"), [(0, 5, 0.2), (3, 10, 0.25), (7, 9, 0.5), (4, 4, 0.3)])
def test_with_one_chance_the_exact_test_is_scipys_binomial_test(
    hits: int, n: int, p: float
) -> None:
    assert poisson_binomial_test(hits, [p] * n) == pytest.approx(binomtest(hits, n, p).pvalue)


def test_the_poisson_binomial_distribution_matches_an_enumeration() -> None:
    chances = [0.5, 0.25, 0.9, 0.1]
    pmf = [0.0] * (len(chances) + 1)
    for outcome in itertools.product((0, 1), repeat=len(chances)):
        pmf[sum(outcome)] += math.prod(
            p if x else 1 - p for p, x in zip(chances, outcome, strict=True)
        )
    assert list(poisson_binomial_pmf(chances)) == pytest.approx(pmf)
    for hits in range(len(chances) + 1):
        expected = sum(q for q in pmf if q <= pmf[hits] * (1 + 1e-7))
        assert poisson_binomial_test(hits, chances) == pytest.approx(expected)
    with pytest.raises(ValueError):
        poisson_binomial_test(5, chances)


def test_certain_answers_shift_the_poisson_binomial_distribution() -> None:
    # two answers that never hit and one that always does: K = 1 + Bernoulli(0.5), so
    # P(K = 1) = P(K = 2) = 0.5 and the counts 0 and 3 are impossible
    assert list(poisson_binomial_pmf([0.0, 1.0, 0.5, 0.0])) == pytest.approx([0, 0.5, 0.5, 0, 0])
    assert poisson_binomial_test(0, [0.0, 1.0, 0.5, 0.0]) == 0.0
    # many answers: the probabilities far from the mean underflow to 0 and are left out of
    # the convolution, yet every count keeps its place (mean 3000 * 0.25 + 2000 / 3)
    pmf = poisson_binomial_pmf([0.25] * 3000 + [1 / 3] * 2000)
    assert len(pmf) == 5001 and pmf.sum() == pytest.approx(1.0)
    assert int(np.argmax(pmf)) in (1416, 1417)
    assert pmf[0] == 0.0 and pmf[5000] == 0.0
