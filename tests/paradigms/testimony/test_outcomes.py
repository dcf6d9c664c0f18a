"""Checkpoint outcome rows of a whole run: which conversations and votes they count, and their
order (stored order; in one conversation the participants' checkpoints, then per observer
round the observers and all seven), on hand-built runs worked out by hand."""

from __future__ import annotations

import pandas as pd

from backchannel.paradigms.testimony import checkpoint_outcomes

from ._tables import conversation, tables
from .test_metrics import votes


def _keys(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    return list(zip(frame["item_id"], frame["group"], frame["checkpoint"], strict=True))


def test_rows_follow_stored_order_and_observer_rounds() -> None:
    plain = conversation("s2", "C0", votes("uuuuu", "ttttt", "ttttt"))
    watched = conversation(
        "s1",
        "C1",
        votes("uuuuu", "tdddu", "ddddd"),
        intervention="passive_observers",
        observers={"T1": "ddt", "R2": "ttx", "obs": "tto"},
        observer_round=7,  # O3: all seven count the analysed four at R3
    )
    frame = checkpoint_outcomes(tables(plain, watched))
    participants = ["T0", "T1", "R1", "R2", "R3"]
    assert _keys(frame) == [
        *(("s2", "participants", c) for c in participants),
        *(("s1", "participants", c) for c in participants),
        ("s1", "observers", "T1"),
        ("s1", "all", "T1"),
        ("s1", "observers", "R2"),
        ("s1", "all", "R2"),
        ("s1", "observers", "O3"),
        ("s1", "all", "O3"),
    ]
    rows = frame.set_index(["item_id", "group", "checkpoint"])
    # Observers at T1: d d t (majority 2) -> decoy; all seven: S A B C at T1 (d d d u) + d d t.
    assert rows.loc[("s1", "observers", "T1"), ["voters", "decoy", "true", "outcome"]].tolist() == [
        3, 2, 1, "decoy",
    ]  # fmt: skip
    assert rows.loc[("s1", "all", "T1"), ["voters", "decoy", "true", "unknown"]].tolist() == [
        7, 5, 1, 1,
    ]  # fmt: skip
    # R2: t t x -> truth (2 of 3), one failed; all: S A B C at R2 all d (4 >= 4) -> decoy.
    assert rows.loc[("s1", "observers", "R2"), ["true", "failed", "outcome"]].tolist() == [
        2, 1, "truth",
    ]  # fmt: skip
    assert rows.loc[("s1", "all", "R2"), ["decoy", "outcome"]].tolist() == [4, "decoy"]
    # O3 (round 7): the analysed four at R3 (round 6), d d d d, with t t o.
    assert rows.loc[("s1", "all", "O3"), ["decoy", "true", "other", "outcome"]].tolist() == [
        4, 2, 1, "decoy",
    ]  # fmt: skip


def test_a_later_vote_of_the_same_agent_and_round_replaces_the_earlier() -> None:
    run = tables(conversation("s1", "C0", votes("uuuuu", "ttttt", "ttttt")))
    events = run.core_events
    again = events[(events["agent"] == "A") & (events["round"] == 2)].assign(
        seq=len(events), value='"blue_box"'
    )
    run.events = pd.concat([events, again], ignore_index=True)
    rows = checkpoint_outcomes(run).set_index("checkpoint")
    assert rows.loc["R1", ["true", "decoy", "outcome"]].tolist() == [3, 1, "truth"]
    assert rows.loc["R2", ["true", "decoy"]].tolist() == [4, 0]


def test_missing_votes_are_failed_and_conversations_without_votes_have_no_rows() -> None:
    run = tables(
        conversation("s1", "C0", {"T0": "uuuuu"}),
        conversation("s2", "C0", {}),
    )
    frame = checkpoint_outcomes(run)
    assert _keys(frame) == [("s1", "participants", c) for c in ["T0", "T1", "R1", "R2", "R3"]]
    t1 = frame.set_index("checkpoint").loc["T1"]
    assert (t1["voters"], t1["failed"], t1["outcome"]) == (4, 4, "none")
    assert checkpoint_outcomes(tables()).empty


def test_stories_read_a_shared_agents_list_once_and_others_anew() -> None:
    from backchannel.paradigms.testimony._outcomes import Stories

    def meta(agents: list[dict[str, str]]) -> dict[str, object]:
        return {
            "endpoint": "red_box",
            "decoy": "blue_box",
            "majority": {"participants": 3},
            "agents": agents,
            "condition": "C0",
            "intervention": "none",
            "deception": "d",
            "key_message_kind": "k",
            "rounds": 3,
        }

    shared = [
        {"name": "K", "role": "key", "model": "m1"},
        {"name": "S", "role": "second_key", "model": "m1"},
        {"name": "A", "role": "member", "model": "m1"},
        {"name": "O", "role": "observer", "model": "m9"},
    ]
    other = [
        {"name": "K", "role": "key", "model": "m2"},
        {"name": "B", "role": "member", "model": "m3"},
    ]
    stories = Stories()
    for cid, agents in (("c1", shared), ("c2", other), ("c3", shared)):
        stories.add(cid, "item", meta(agents))
    assert stories.analysed == [["S", "A"], ["B"], ["S", "A"]]
    assert stories.observers == [["O"], [], ["O"]]
    assert stories.base["model"] == ["m1", "m2+m3", "m1"]
