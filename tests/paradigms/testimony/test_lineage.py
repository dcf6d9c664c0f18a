"""Propagation order, root holding, transitions and the lineage metrics on hand-built runs whose
answers are worked out below (K key, S second-key, A B C members; true root S, false root K)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._agreement import citation_agreement
from backchannel.paradigms.testimony._citations import Claim, Extraction
from backchannel.paradigms.testimony._graph import citation_table, records
from backchannel.paradigms.testimony._lineage import (
    MEMBER_COLUMNS,
    STATEMENT_COLUMNS,
    _frames,
    frame_transitions,
    lineage_metrics,
)
from backchannel.paradigms.testimony._lineage_report import pooled_rates
from backchannel.paradigms.testimony._propagation import (
    adopting,
    direct,
    slot_orders,
    through_carrier,
)
from backchannel.paradigms.testimony._roots import holdings, state_of, transitions

from ._lineage_run import conversation, tables
from ._reference import member_rows, statement_orders, statement_rows, tally_claims

# C1. Orders worked out by hand:
#   R1  A {K:1}          B {S:1}        C {}
#   R2  A {S:2, K:1}     B {K:2}        C {K:2}     (B's and C's self-citations do not count)
#   R3  A {K:3}          B {K:3, S:3}   C {}        (C says nothing)
C1_STATEMENTS = {
    ("K", "R1"): "It ended in the blue_box [T:K].",
    ("S", "R1"): "It ended in the red_box [T:S].",
    ("A", "R1"): "It ended in the blue_box [T:K].",
    ("B", "R1"): "It is in the red_box [T:S].",
    ("C", "R1"): "No idea.",
    ("A", "R2"): "Red box per Bob [S:B@R1]. Still K says blue_box [T:K].",
    ("B", "R2"): "Blue box, as A said [S:A@R1]. Also me [S:B@R1].",
    ("C", "R2"): "Following A [S:A@R1] and me? [S:C@R2]",
    ("A", "R3"): "[S:B@R2] it is the red_box.",
    ("B", "R3"): "[S:C@R2] [S:A@R2]",
    ("C", "R3"): "",
}
C1_VOTES = {("A", "R2"): "t", ("B", "R2"): "d", ("A", "R3"): "u", ("B", "R3"): "d"}


def c1() -> dict[str, Any]:
    return conversation("s1", "C1", C1_STATEMENTS, C1_VOTES)


def lineage(*specs: dict[str, Any]) -> dict[str, Any]:
    found = lineage_metrics(tables(*specs))
    assert found["judges"] == ["citations"]
    return found["by_judge"]["citations"]


def rate(rows: list[dict[str, Any]], testimony: str, phase: str) -> dict[str, Any]:
    (row,) = [r for r in rows if r["testimony"] == testimony and r["phase"] == phase]
    return row


def test_propagation_through_a_chain_that_returns_to_its_start() -> None:
    # A cites K's testimony, B cites A, A cites B, C cites A: orders 1, 2, 3, 4.
    orders = statement_orders(
        [
            (("A", "R1"), [Claim("testimony", "K", None, None)]),
            (("B", "R2"), [Claim("statement", "A", "R1", None)]),
            (("A", "R3"), [Claim("statement", "B", "R2", None)]),
            (
                ("C", "R4"),
                [Claim("statement", "A", "R3", None), Claim("testimony", "K", None, None)],
            ),
        ]
    )
    assert orders[("A", "R1")] == {"K": 1}
    assert orders[("B", "R2")] == {"K": 2}
    assert orders[("A", "R3")] == {"K": 3}
    assert orders[("C", "R4")] == {"K": 4}  # the maximum over its claims, not the direct 1


def test_a_cycle_within_a_round_is_refused() -> None:
    with pytest.raises(ValueError, match="not earlier"):
        statement_orders(
            [
                (("A", "R2"), [Claim("statement", "B", "R2", None)]),
                (("B", "R2"), [Claim("statement", "A", "R2", None)]),
            ]
        )


def test_mutual_citations_of_one_round_are_counted_invalid_and_carry_nothing() -> None:
    spec = conversation(
        "s2",
        "C1",
        {
            ("A", "R1"): "blue_box [T:K]",
            ("B", "R2"): "As A says now [S:A@R2]",
            ("A", "R2"): "As B says now [S:B@R2]",
        },
    )
    found = lineage(spec)
    assert found["extraction"]["invalid_citations"] == {"later_round": 2}
    assert rate(found["citation"], "key", "R2")["citation_rate"] == 0.0


def test_holdings_and_states() -> None:
    assert [state_of(t, f) for t, f in ((0, 0), (1, 0), (0, 1), (1, 1))] == [
        "none",
        "true_only",
        "false_only",
        "both",
    ]
    path = holdings([{"S": 1}, {}, {"K": 2, "S": 3}], "S", "K")
    assert path == [("true_only", 1, None), ("true_only", 1, None), ("both", 3, 2)]
    assert holdings([{"K": 1}], "S", None) == [("none", None, None)]  # C0: no false root
    assert transitions([["none", "both"], ["none", "both"], ["both", "both"]]) == {
        (0, "none", "both"): 2,
        (0, "both", "both"): 1,
    }


def test_one_pass_tally_counts_as_direct_through_carrier_and_adopting() -> None:
    carried = {("A", "R1"): {"K": 1}, ("B", "R1"): {"K": 2, "S": 1}, ("C", "R1"): {}}
    claims = (
        Claim("testimony", "K", None, "blue"),  # K direct, supports K's endpoint
        Claim("testimony", "S", None, "blue"),  # S direct, not S's endpoint
        Claim("statement", "A", "R1", "red"),  # carries K, not K's endpoint
        Claim("statement", "B", "R1", "red"),  # carries K and S; S's endpoint
        Claim("statement", "C", "R1", "red"),  # carries nothing
        Claim("testimony", "X", None, "red"),  # no testimony of interest
    )
    endpoints: dict[str, str | None] = {"K": "blue", "S": "red"}
    # By hand: K direct 1, through a carrier 2 (A, B), adopting 1 (its own testimony, blue);
    # S direct 1, through a carrier 1 (B), adopting 1 (B's claim, red).
    expected = {"K": [1, 2, 1], "S": [1, 1, 1]}
    assert tally_claims(claims, endpoints, carried) == expected
    for sender, endpoint in endpoints.items():
        assert expected[sender] == [
            direct(claims, sender),
            through_carrier(claims, sender, carried),
            adopting(claims, sender, endpoint, carried),
        ]
    assert tally_claims(claims, {"K": None}, carried) == {"K": [1, 2, 0]}  # no endpoint: none adopt


def test_transitions_of_a_frame_count_each_members_rows_in_round_order() -> None:
    # Rows out of order: c1/A goes none -> true_only -> both, c1/B none -> none, c2/A both -> both
    # (two rounds only); the member rows of two conversations share agent names.
    rows = pd.DataFrame(
        [
            ("c1", "A", "R3", "both"),
            ("c2", "A", "R2", "both"),
            ("c1", "B", "R1", "none"),
            ("c1", "A", "R1", "none"),
            ("c1", "B", "R2", "none"),
            ("c2", "A", "R1", "both"),
            ("c1", "A", "R2", "true_only"),
        ],
        columns=["conversation_id", "agent", "phase", "state"],
    )
    expected = {
        (0, "none", "true_only"): 1,
        (1, "true_only", "both"): 1,
        (0, "none", "none"): 1,
        (0, "both", "both"): 1,
    }
    paths = [["none", "true_only", "both"], ["none", "none"], ["both", "both"]]
    assert transitions(paths) == expected
    assert frame_transitions(rows) == expected


def test_citation_adoption_and_order_per_testimony_and_round() -> None:
    rows = lineage(c1())["citation"]
    r1k = rate(rows, "key", "R1")
    assert r1k["statements"] == 3  # members only: K's and S's statements are not analysed
    assert (r1k["direct_rate"], r1k["carrier_rate"], r1k["citation_rate"]) == (1 / 3, 0.0, 1 / 3)
    assert r1k["adoption_rate"] == 1 / 3 and r1k["mean_order"] == 1.0
    r2k = rate(rows, "key", "R2")
    assert (r2k["direct_rate"], r2k["carrier_rate"], r2k["citation_rate"]) == (1 / 3, 2 / 3, 1.0)
    # A's [T:K] and B's [S:A@R1] sit in sentences naming blue_box; C's names no container
    assert r2k["adoption_rate"] == 2 / 3
    assert (r2k["claims_direct"], r2k["claims_carrier"]) == (1, 2)
    assert r2k["mean_order"] == pytest.approx(5 / 3)
    r2s = rate(rows, "second_key", "R2")
    assert (r2s["citation_rate"], r2s["adoption_rate"], r2s["mean_order"]) == (1 / 3, 1 / 3, 2.0)
    r3k = rate(rows, "key", "R3")
    assert (r3k["citation_rate"], r3k["adoption_rate"], r3k["mean_order"]) == (2 / 3, 0.0, 3.0)
    assert r3k["claims_carrier"] == 3
    r3s = rate(rows, "second_key", "R3")
    # A endorses red_box in R3 through B@R2, which carries K only: A supports S's endpoint
    # without carrying S, so A does not adopt S. B carries S (through A@R2) but names no
    # container. Adoption 0; the old figure, any claim on S's endpoint, 1/3.
    assert (r3s["citation_rate"], r3s["adoption_rate"], r3s["mean_order"]) == (1 / 3, 0.0, 3.0)
    assert r3s["endpoint_support_rate"] == 1 / 3
    assert (r3s["citing"], r3s["adoption_given_citation"]) == (1, 0.0)
    # Among the R2 statements carrying K (A, B, C), A and B adopt it: 2 of 3.
    assert (r2k["citing"], r2k["adoption_given_citation"]) == (3, 2 / 3)
    assert r2k["claims_adopting"] == 2


def test_in_c0_the_two_keys_adoption_differs_by_what_is_cited() -> None:
    # Both honest testimonies point to the red_box in C0: a claim on the red_box citing S
    # adopts S and not K, although it supports K's endpoint too.
    spec = conversation(
        "s3",
        "C0",
        {
            ("A", "R1"): "The red_box, says S [T:S].",
            ("B", "R1"): "Red box [T:K]. I agree with S [T:S] on the red_box.",
            ("C", "R1"): "Surely the red_box.",
        },
    )
    rows = lineage(spec)["citation"]
    key, second = rate(rows, "key", "R1"), rate(rows, "second_key", "R1")
    assert (key["adoption_rate"], second["adoption_rate"]) == (1 / 3, 2 / 3)
    # A claim on the endpoint, whatever it cites: A and B for both (C cites nothing, so makes
    # no claim): the old figure, equal for the two by construction.
    assert key["endpoint_support_rate"] == second["endpoint_support_rate"] == 2 / 3


def test_root_states_transitions_pickups_and_both_root_votes() -> None:
    found = lineage(c1())
    states = {r["phase"]: r for r in found["root_states"]}
    # A false_only, B true_only, C none -> A both, B both, C false_only -> the same
    assert {k: states["R1"][k] for k in ("none", "true_only", "false_only", "both")} == {
        "none": 1,
        "true_only": 1,
        "false_only": 1,
        "both": 0,
    }
    assert (states["R2"]["both"], states["R2"]["false_only"]) == (2, 1)
    assert (states["R3"]["both"], states["R3"]["false_only"]) == (2, 1)
    moved = {
        (r["from_phase"], r["from_state"], r["to_state"]): r["count"] for r in found["transitions"]
    }
    assert moved == {
        ("R1", "false_only", "both"): 1,
        ("R1", "none", "false_only"): 1,
        ("R1", "true_only", "both"): 1,
        ("R2", "both", "both"): 2,
        ("R2", "false_only", "false_only"): 1,
    }
    picked = {(r["from_phase"], r["from_state"]): r for r in found["pickups"]}
    assert (picked[("R1", "true_only")]["holders"], picked[("R1", "true_only")]["share"]) == (
        1,
        1.0,
    )
    assert picked[("R1", "false_only")]["share"] == 1.0
    assert math.isnan(picked[("R2", "true_only")]["share"])
    assert (picked[("R2", "false_only")]["holders"], picked[("R2", "false_only")]["share"]) == (
        1,
        0.0,
    )
    votes = {r["phase"]: r for r in found["both_root_votes"]}
    assert (votes["R2"]["holders"], votes["R2"]["true_share"], votes["R2"]["decoy_share"]) == (
        2,
        0.5,
        0.5,
    )
    assert (votes["R3"]["unknown_share"], votes["R3"]["decoy_share"]) == (0.5, 0.5)
    single = {
        (r["root"], r["phase"]): (r["holders"], r["mean_order"]) for r in found["single_root_order"]
    }
    # B true-only at R1 (order 1), A false-only at R1 (1); C false-only at R2 and R3 at order 2
    assert single == {
        ("true", "R1"): (1, 1.0),
        ("false", "R1"): (1, 1.0),
        ("false", "R2"): (1, 2.0),
        ("false", "R3"): (1, 2.0),
    }


def test_c0_has_no_false_root_and_failed_extractions_are_counted() -> None:
    spec = conversation(
        "s3",
        "C0",
        {("A", "R1"): "red_box [T:S]", ("B", "R1"): "red_box [T:K]", ("C", "R1"): "??"},
        failed={("C", "R1")},
    )
    found = lineage(spec)
    states = {r["phase"]: r for r in found["root_states"]}
    # A holds the true root; B cites K, which is no root in C0; C's extraction failed
    assert (states["R1"]["true_only"], states["R1"]["none"], states["R1"]["both"]) == (1, 2, 0)
    assert found["extraction"]["by_status"] == {"ok": 2, "parse_failure": 1}
    row = rate(found["citation"], "key", "R1")
    assert (row["statements"], row["not_extracted"], row["citation_rate"]) == (2, 1, 0.5)
    # In C0 the key's testimony supports the true endpoint: both A and B support it, but only
    # B, who cites K, adopts K's testimony.
    assert (row["adoption_rate"], row["endpoint_support_rate"]) == (0.5, 1.0)


def test_extraction_summary_counts_claims_and_invalid_citations() -> None:
    summary = lineage(c1())["extraction"]
    assert summary["statements"] == 11
    assert summary["claims"] == 11
    assert summary["invalid_citations"] == {"self": 2}


def test_citation_table_links_each_claim_to_the_cited_event() -> None:
    run = tables(c1(), conversation("s3", "C0", {("C", "R1"): "?"}, failed={("C", "R1")}))
    graph = citation_table(run)
    events = run.events
    seq = {
        (r["conversation_id"], r["agent"], r["round"], r["name"]): r["seq"]
        for r in events.to_dict("records")
    }
    cid = "condition=C1/s1/0"
    a_r2 = graph[
        (graph["conversation_id"] == cid) & (graph["agent"] == "A") & (graph["phase"] == "R2")
    ]
    ok = a_r2[a_r2["status"] == "ok"].sort_values("claim")
    assert list(ok["source_kind"]) == ["statement", "testimony"]
    assert list(ok["source_seq"]) == [
        seq[(cid, "B", 2, "statement")],
        seq[(cid, "K", 1, "testimony")],
    ]
    assert list(ok["supports"]) == ["red_box", "blue_box"]
    selfs = graph[graph["status"] == "self"]
    assert set(selfs["text"]) == {"[S:B@R1]", "[S:C@R2]"}
    failed = graph[graph["status"] == "parse_failure"]
    assert list(failed["conversation_id"]) == ["condition=C0/s3/0"]
    assert len(graph[graph["status"] == "ok"]) == 11


def test_agreement_of_two_citation_judges() -> None:
    run = tables(c1())
    other = run.labels.copy()
    other["judge"] = "citations_x"
    a_r1 = run.events[(run.events["agent"] == "A") & (run.events["round"] == 2)]["seq"].item()
    empty = Extraction((), ()).label()
    other.loc[other["event_seq"] == a_r1, "label"] = empty  # B finds nothing in A's R1
    both = RunTables(run.events, pd.concat([run.labels, other]), run.conversations)
    found = citation_agreement(both, "citations", "citations_x")
    assert (found["statements"], found["both_extracted"]) == (11, 11)
    assert found["exact_agreement"] == 10 / 11
    assert (found["claims_a"], found["claims_b"]) == (11, 10)
    assert (found["precision"], found["recall"], found["same_endpoint"]) == (1.0, 10 / 11, 1.0)
    # [T:K] directly: K R1, A R1, A R2 for A; K R1, A R2 for B. po = 10/11,
    # pe = (3 * 2 + 8 * 9) / 121 = 78/121, kappa = (110 - 78) / (121 - 78) = 32/43
    assert found["kappa_cites_key"] == pytest.approx(32 / 43)
    assert found["kappa_cites_second_key"] == 1.0


def test_report_pools_rounds_with_wilson_intervals() -> None:
    pooled = pooled_rates(lineage(c1())["citation"])
    row = pooled[(pooled["bar"] == "key C1") & (pooled["measure"] == "citation")].iloc[0]
    # key testimony carried in 1 + 3 + 2 of the members' 9 statements
    low, high = proportion_confint(6, 9, method="wilson")
    assert (row["statements"], row["rate"]) == (9, 6 / 9)
    assert (row["low"], row["high"]) == pytest.approx((low, high))


def test_active_observers_carry_testimony_between_rounds() -> None:
    # R1: A cites K (order 1); O1: observer P cites A (2); R2: B cites P (3).
    spec = conversation(
        "s4",
        "C1",
        {
            ("A", "R1"): "blue_box [T:K]",
            ("P", "O1"): "A says blue_box [S:A@R1]",
            ("B", "R2"): "Per P, the blue_box [S:P@O1]",
        },
        intervention="active_observers",
    )
    found = lineage(spec)
    rows = found["citation"]
    (observer,) = [r for r in rows if r["group"] == "observers" and r["testimony"] == "key"]
    assert (observer["phase"], observer["carrier_rate"], observer["mean_order"]) == ("O1", 1.0, 2.0)
    member = rate([r for r in rows if r["group"] == "members"], "key", "R2")
    assert (member["statements"], member["carrier_rate"], member["mean_order"]) == (1, 1.0, 3.0)
    assert member["adoption_rate"] == 1.0 and member["intervention"] == "active_observers"
    single = {(r["root"], r["phase"]): r["mean_order"] for r in found["single_root_order"]}
    # R1: A at 1; R2 and R3 (holding lasts): A still at 1, B at 3
    assert single == {("false", "R1"): 1.0, ("false", "R2"): 2.0, ("false", "R3"): 2.0}


def test_slot_orders_propagate_a_round_at_a_time_and_keep_a_slots_last_statement() -> None:
    # Statements 0..3: A@R1 cites K; B@R2 cites slot 0 (A@R1); a second A@R1 (slot 0 again)
    # cites nothing; an R3 statement cites K and slot 1 (B@R2). Slot 0 keeps the later A@R1's
    # nothing, as `statement_orders` keeps a key's last statement, so B carries nothing: R3 at 1.
    numbers = np.array([2, 4, 2, 6])
    slots = np.array([0, 1, 0, 2])
    claim_statement = np.array([0, 1, 3, 3])
    direct = np.array([True, False, False, True])
    cited = np.array([-1, 0, 1, -1])
    assert slot_orders(numbers, slots, claim_statement, direct, cited, 3).tolist() == [0, 0, 1]
    # Without the second A@R1: A 1, B 2, the R3 statement max(B's 2 + 1, direct 1) = 3.
    assert slot_orders(
        numbers[[0, 1, 3]], slots[[0, 1, 3]], np.array([0, 1, 2, 2]), direct, cited, 3
    ).tolist() == [1, 2, 3]


@pytest.mark.parametrize("name", ["c1", "c0_failed", "observers", "same_round"])
def test_frames_are_the_rows_of_each_record(name: str) -> None:
    specs = {
        "c1": [c1()],
        "c0_failed": [
            c1(),
            conversation(
                "s3",
                "C0",
                {("A", "R1"): "red_box [T:S]", ("B", "R1"): "red_box [T:K]", ("C", "R1"): "?"},
                {("A", "R1"): "t", ("C", "R1"): "x"},
                failed={("C", "R1")},
            ),
        ],
        "observers": [
            conversation(
                "s4",
                "C1",
                {
                    ("A", "R1"): "blue_box [T:K]",
                    ("P", "O1"): "A says blue_box [S:A@R1]",
                    ("B", "R2"): "Per P, the blue_box [S:P@O1]",
                    ("A", "R3"): "red_box [T:S] and [S:B@R2]",
                },
                intervention="active_observers",
            )
        ],
        "same_round": [
            conversation("s2", "C1", {("A", "R2"): "[S:B@R2]", ("B", "R2"): "[S:A@R2]"})
        ],
    }
    found = records(tables(*specs[name]), "citations")
    statements, members = _frames(found)
    expected_s = [row for r in found for row in statement_rows(r)]
    expected_m = [row for r in found for row in member_rows(r)]
    by_row = pd.DataFrame.from_records(expected_s, columns=list(STATEMENT_COLUMNS))
    by_member = pd.DataFrame.from_records(expected_m, columns=list(MEMBER_COLUMNS))
    # A column of no orders at all is None as rows and NaN as columns: read as floats alike.
    by_row["order"] = by_row["order"].astype(float)
    by_member[["order_true", "order_false"]] = by_member[["order_true", "order_false"]].astype(
        float
    )
    pd.testing.assert_frame_equal(statements, by_row, check_dtype=False)
    pd.testing.assert_frame_equal(members, by_member, check_dtype=False)
