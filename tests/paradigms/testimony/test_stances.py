"""Testimony stance pairs on a hand-built run: statements in citation markup against the votes
of their round, towards the decoy blue_box, worked out by hand."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from backchannel.analysis import STANCE_PAIR_COLUMNS, RunTables, check_stance_pairs
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms._stance_rows import pairs_frame
from backchannel.paradigms.testimony import _stances
from backchannel.paradigms.testimony._graph import records
from backchannel.paradigms.testimony._stances import (
    AT_DECOY,
    FAILED_EXTRACTION,
    NO_PROBE,
    NO_START,
    UNLABELLED,
    UNREADABLE,
    UNREADABLE_START,
)

from ._lineage_run import conversation, tables
from ._reference import stance_rows
from .test_graph import _edited

STATEMENTS = {
    ("A", "R1"): "The marble is in the blue_box. [T:K]",  # backs the decoy
    ("B", "R1"): "K's account [T:K] puts the marble in the red_box.",
    ("C", "R1"): "I think the marble is in the red_box [T:S].",
    ("S", "R1"): "Unreadable for the extractor.",
    ("K", "R1"): "I think the marble is in the blue_box.",
    ("A", "R2"): "It is in the green_box. [T:S]",
    ("B", "R2"): "Still the red_box. [T:S]",
    ("A", "R3"): "The red_box, as S says. [T:S]",
    ("B", "R3"): "I cannot tell where it is.",
}
VOTES = {
    **{(agent, "T0"): "t" for agent in "ABS"},
    ("C", "T0"): "d",  # C's own window ends at the decoy
    ("A", "R1"): "t",
    ("B", "R1"): "d",
    ("C", "R1"): "d",
    ("S", "R1"): "t",
    ("A", "R2"): "x",
    ("A", "R3"): "t",
    ("B", "R3"): "u",
}


def _pairs(run: RunTables) -> pd.DataFrame:
    pairs = get_paradigm("testimony").stance_pairs(run, AnalysisOptions())
    assert list(pairs.columns) == list(STANCE_PAIR_COLUMNS)
    check_stance_pairs(pairs)
    return pairs


def _by_turn(pairs: pd.DataFrame) -> dict[tuple[str, int], tuple]:
    plain = pairs.astype(object).where(pairs.notna(), None)
    return {
        (r.agent, r.round): (r.public_moved, r.private_moved, r.agree, r.skipped)
        for r in plain.itertuples()
    }


def test_statements_against_votes_by_hand() -> None:
    run = tables(conversation("s1", "C1", STATEMENTS, VOTES, failed={("S", "R1")}))
    assert _by_turn(_pairs(run)) == {
        ("A", 2): (True, False, False, None),  # public accommodation: backs blue_box, votes red
        ("B", 2): (False, True, False, None),  # hidden change: backs red_box, votes blue_box
        ("C", 2): (None, None, None, AT_DECOY),
        ("S", 2): (None, None, None, FAILED_EXTRACTION),
        ("K", 2): (None, None, None, NO_START),
        ("A", 4): (None, None, None, UNREADABLE),
        ("B", 4): (None, None, None, NO_PROBE),
        ("A", 6): (False, False, True, None),  # backs and votes red_box
        ("B", 6): (False, False, True, None),  # UNKNOWN, backing no place
    }


def test_turn_and_probe_sequences() -> None:
    run = tables(conversation("s1", "C1", STATEMENTS, VOTES, failed={("S", "R1")}))
    pairs = _pairs(run)
    events = run.events.set_index("seq")
    for row in pairs.itertuples():
        turn = events.loc[row.turn_seq]
        assert (turn["kind"], turn["agent"], turn["round"]) == ("message", row.agent, row.round)
        if row.probe_seq is not pd.NA:
            probe = events.loc[int(row.probe_seq)]
            assert (probe["name"], probe["agent"], probe["round"]) == ("vote", row.agent, row.round)
    assert pairs.loc[pairs["agent"].eq("B") & pairs["round"].eq(4), "probe_seq"].isna().all()


def test_an_unreadable_starting_vote_and_unlabelled_statements() -> None:
    votes = {**VOTES, ("A", "T0"): "x"}
    run = tables(conversation("s1", "C0", STATEMENTS, votes))
    pairs = _by_turn(_pairs(run))
    assert {pairs[("A", r)][3] for r in (2, 4, 6)} == {UNREADABLE_START}
    # Without the statement's label it is unlabelled; without any extraction, all are.
    seq = int(run.events.query("agent == 'B' and round == 2 and kind == 'message'")["seq"].iloc[0])
    labels = run.labels[run.labels["event_seq"] != seq]
    partial = RunTables(run.events, labels, run.conversations, run.manifest)
    assert _by_turn(_pairs(partial))[("B", 2)][3] == UNLABELLED
    bare = RunTables(run.events, run.labels.iloc[0:0], run.conversations, run.manifest)
    assert set(_pairs(bare)["skipped"]) == {UNLABELLED}


def test_an_off_the_record_vote_is_paired_with_its_statement() -> None:
    run = tables(conversation("s1", "C1", STATEMENTS, VOTES, failed={("S", "R1")}))
    turn = run.events.query("agent == 'B' and round == 2 and kind == 'message'").iloc[[0]]
    probe = turn.copy()
    probe["seq"] = int(run.events["seq"].max()) + 1
    probe["kind"], probe["name"], probe["channel"] = "probe", "off_the_record", "private"
    probe["value"] = json.dumps("red_box")
    probe["meta"] = json.dumps({"turn_seq": int(turn["seq"].iloc[0])})
    events = pd.concat([run.events, probe], ignore_index=True)
    pairs = _pairs(RunTables(events, run.labels, run.conversations, run.manifest))
    row = pairs[pairs["agent"].eq("B") & pairs["round"].eq(2)].iloc[0]
    # Off the record B keeps to red_box, as its statement does: no hidden change.
    assert row["probe_seq"] == probe["seq"].iloc[0]
    assert (row["public_moved"], row["private_moved"], row["agree"]) == (False, False, True)


def _reference_pairs(run: RunTables) -> pd.DataFrame:
    """The pairs of every record built one statement at a time."""
    votes, probes = _stances._votes(run), _stances._probes(run)
    rows = [row for r in records(run, "citations") for row in stance_rows(r, votes, probes)]
    return pairs_frame(rows)


@pytest.mark.parametrize(
    "specs",
    [
        [conversation("s1", "C1", STATEMENTS, VOTES)],
        [conversation("s1", "C1", STATEMENTS, VOTES), conversation("s2", "C0", STATEMENTS, {})],
        # Unreadable and missing votes, failed and missing extractions.
        [
            conversation(
                "s3",
                "C1",
                STATEMENTS,
                {**VOTES, ("A", "T0"): "x", ("B", "R2"): "x", ("C", "R1"): "u"},
                failed={("B", "R1"), ("A", "R3")},
            ),
            conversation("s4", "C0", {("C", "R1"): "red_box [T:S]"}, {("C", "T0"): "t"}),
        ],
    ],
)
def test_pairs_match_the_one_statement_at_a_time_reference(specs: list[dict[str, Any]]) -> None:
    run = tables(*specs)
    found = _stances.stance_pairs(run)
    expected = _reference_pairs(run)
    assert len(found) == sum(len(r.statements) for r in records(run, "citations"))
    pd.testing.assert_frame_equal(found, expected)
    assert list(found.dtypes) == list(expected.dtypes)
    assert found.equals(expected)


def test_pairs_take_the_later_of_two_votes_as_the_reference_does() -> None:
    run = _edited()  # A's R1 vote of s1 asked again, events stored out of order
    pd.testing.assert_frame_equal(_stances.stance_pairs(run), _reference_pairs(run))
