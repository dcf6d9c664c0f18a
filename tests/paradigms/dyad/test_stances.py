"""Dyad stance pairs on hand-built runs: interaction states against ratings, worked by hand."""

from __future__ import annotations

import json

import pandas as pd

from backchannel.analysis import STANCE_PAIR_COLUMNS, RunTables, check_stance_pairs
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms.dyad._stances import (
    NO_CATEGORY,
    NO_PRE_RATING,
    NO_PROBE,
    NO_SIDE,
    NO_STATE,
    UNREADABLE,
)

from ._build import FAIL, Conv, tables

NA = pd.NA


def _conv(cid: str, rd: list, ro: list, cd: list, co: list, wording: str = "first") -> Conv:
    return Conv(cid, "m1", "m1", "human", "plain", wording, rd, ro, cd, co)


def _pairs(run: RunTables) -> pd.DataFrame:
    pairs = get_paradigm("dyad").stance_pairs(run, AnalysisOptions())
    assert list(pairs.columns) == list(STANCE_PAIR_COLUMNS)
    check_stance_pairs(pairs)
    return pairs


def _flags(pairs: pd.DataFrame) -> list[tuple]:
    return [
        (r.role, r.round, r.public_moved, r.private_moved, r.agree, r.skipped)
        for r in pairs.itertuples()
    ]


def test_states_against_ratings_by_hand() -> None:
    # d0 = 3, o0 = 5. Round 1: D IGNORE stays 3, O REJECT moves away from 3 to 6.
    # Round 2: D ACCEPT moves towards 6 to 4, O IGNORE stays 6.
    run = tables([_conv("c", [3, 4, 3], [5, 5, 5], ["IGNORE", "ACCEPT"], ["REJECT", "IGNORE"])])
    pairs = _pairs(run)
    assert _flags(pairs) == [
        ("discussant", 0, NA, NA, NA, NO_CATEGORY),
        ("discussant", 1, False, True, False, None),  # hidden change: rating 4, state 3
        ("opponent", 1, False, False, False, None),  # state 6 is away from the Discussant
        ("discussant", 2, True, False, False, None),  # accommodation: state 4, rating 3
        ("opponent", 2, False, False, False, None),
    ]
    # Seqs: ratings 0, 1; opening 2; D turn 3, O turn 4, ratings 5, 6; turns 7, 8, ratings 9, 10.
    assert pairs["turn_seq"].tolist() == [2, 3, 4, 7, 8]
    assert pairs["probe_seq"].astype(object).where(pairs["probe_seq"].notna(), None).tolist() == [
        None,
        5,
        6,
        9,
        10,
    ]


def test_the_opposite_wording_is_aligned_first() -> None:
    # Raw 3/1 shown the opposite statement align to 3/5: the same pairs as above.
    run = tables(
        [_conv("c", [3, 2, 3], [1, 1, 1], ["IGNORE", "ACCEPT"], ["REJECT", "IGNORE"], "opposite")]
    )
    assert (
        _flags(_pairs(run))[1:]
        == _flags(
            _pairs(
                tables(
                    [_conv("c", [3, 4, 3], [5, 5, 5], ["IGNORE", "ACCEPT"], ["REJECT", "IGNORE"])]
                )
            )
        )[1:]
    )


def test_skipped_reasons() -> None:
    run = tables(
        [
            _conv("tag", [3, 3, 3], [5, 5, 5], [FAIL, "ACCEPT"], ["IGNORE", "IGNORE"]),
            _conv("rating", [3, FAIL, 4], [5, 5, 5], ["IGNORE", "ACCEPT"], ["IGNORE", "IGNORE"]),
            _conv("pre", [FAIL, 3, 3], [5, 5, 5], ["IGNORE", "IGNORE"], ["IGNORE", "IGNORE"]),
            _conv("side", [4, 4, 4], [4, 4, 4], ["IGNORE", "IGNORE"], ["IGNORE", "IGNORE"]),
        ]
    )
    pairs = _pairs(run).set_index(["conversation_id", "role", "round"])
    # An unreadable tag of the Discussant's round 1 leaves both states unknown from then on.
    assert {
        pairs.loc[("tag", role, r), "skipped"]
        for role in ("discussant", "opponent")
        for r in (1, 2)
    } == {NO_STATE}
    assert pairs.loc[("rating", "discussant", 1), "skipped"] == UNREADABLE
    # Round 2: state 4 after ACCEPT towards 5, rating 4: both moved, agreeing.
    row = pairs.loc[("rating", "discussant", 2)]
    assert (row["public_moved"], row["private_moved"], row["agree"]) == (True, True, True)
    assert pairs.loc[("pre", "opponent", 1), "skipped"] == NO_PRE_RATING
    assert pairs.loc[("side", "discussant", 2), "skipped"] == NO_SIDE


def test_a_missing_rating_is_a_missing_probe() -> None:
    run = tables([_conv("c", [3, 4, 3], [5, 5, 5], ["IGNORE", "ACCEPT"], ["REJECT", "IGNORE"])])
    events = run.events[run.events["seq"] != 5].reset_index(drop=True)
    pairs = _pairs(RunTables(events, run.labels, run.conversations, run.manifest))
    row = pairs[(pairs["role"] == "discussant") & (pairs["round"] == 1)].iloc[0]
    assert row["skipped"] == NO_PROBE and row["probe_seq"] is NA


def test_an_off_the_record_rating_is_paired_with_its_turn() -> None:
    run = tables([_conv("c", [3, 4, 3], [5, 5, 5], ["IGNORE", "ACCEPT"], ["REJECT", "IGNORE"])])
    probe = run.events.iloc[[5]].copy()
    probe["seq"] = 11
    probe["kind"], probe["name"] = "probe", "off_the_record"
    probe["value"] = json.dumps(3)
    probe["meta"] = json.dumps({"turn_seq": 3})
    events = pd.concat([run.events, probe], ignore_index=True)
    pairs = _pairs(RunTables(events, run.labels, run.conversations, run.manifest))
    row = pairs[pairs["turn_seq"] == 3].iloc[0]
    # Off the record the Discussant stays at 3: neither channel moved, and they agree.
    assert row["probe_seq"] == 11
    assert (row["public_moved"], row["private_moved"], row["agree"]) == (False, False, True)
