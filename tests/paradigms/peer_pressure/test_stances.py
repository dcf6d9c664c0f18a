"""Peer pressure's stance pairs on a hand-built run: which turns pair with which probe, how
each channel is read, and why a turn is skipped, worked out by hand."""

from __future__ import annotations

import json

import pandas as pd
from test_metrics import EVENT_FAIL, LABEL_FAIL, build_run, conversation

from backchannel.analysis import (
    STANCE_PAIR_COLUMNS,
    Design,
    RunTables,
    divergence,
    divergent_turns,
)
from backchannel.orchestration import compute_metrics
from backchannel.paradigms import AnalysisOptions, get_paradigm

ROSTER = [("Alice", "adversary"), ("Bob", "honest"), ("Cara", "honest"), ("Dan", "honest")]
NO_ADVERSARY = [("Bob", "honest"), ("Cara", "honest")]

RUN = build_run(
    [
        conversation(
            "A",
            {"k": 1},
            ROSTER[:3],
            rounds=[
                [("Bob", "endorse"), ("Alice", "endorse"), ("Cara", "hedge")],
                [("Cara", "endorse"), ("Bob", EVENT_FAIL), ("Alice", "endorse")],
            ],
            probes={
                0: {"Bob": "true", "Cara": "true"},
                1: {"Bob": "manipulated", "Cara": "manipulated"},
                2: {"Bob": "manipulated", "Cara": LABEL_FAIL},
            },
        ),
        conversation(
            "B",
            {"k": 0},
            NO_ADVERSARY,
            rounds=[[("Bob", "endorse"), ("Cara", "reject")]],
            probes={0: {"Bob": "true", "Cara": "manipulated"}, 1: {"Bob": "true", "Cara": "true"}},
        ),
        conversation(
            "C",
            {"k": 1},
            ROSTER,
            item="q2",
            rounds=[[("Alice", "endorse"), ("Bob", "endorse"), ("Dan", "reject")]],
            probes={0: {"Bob": LABEL_FAIL, "Dan": "true"}, 1: {"Bob": "manipulated"}},
        ),
        conversation(
            "D",
            {"k": 1},
            ROSTER[:2],
            item="q3",
            rounds=[[("Alice", "endorse"), ("Bob", "endorse")]],
            probes={0: {"Bob": "uncertain"}, 1: {"Bob": "manipulated"}},
        ),
    ],
    factors=("k",),
)


def pairs() -> pd.DataFrame:
    return get_paradigm("peer_pressure").stance_pairs(RUN, AnalysisOptions(judge="j"))


def by_turn(frame: pd.DataFrame) -> dict[tuple[str, str, int], dict]:
    return {(r.conversation_id, r.agent, r.round): r._asdict() for r in frame.itertuples()}


def test_every_honest_turn_has_one_row_with_its_reading():
    frame = pairs()
    assert list(frame.columns) == list(STANCE_PAIR_COLUMNS)
    rows = by_turn(frame)
    assert set(rows) == {
        ("A", "Bob", 1),
        ("A", "Cara", 1),
        ("A", "Cara", 2),
        ("A", "Bob", 2),
        ("B", "Bob", 1),
        ("B", "Cara", 1),
        ("C", "Bob", 1),
        ("C", "Dan", 1),
        ("D", "Bob", 1),
    }
    skipped = {key: row["skipped"] for key, row in rows.items() if row["skipped"] is not None}
    assert skipped == {
        ("A", "Bob", 1): "before any adversary message",
        ("A", "Bob", 2): "turn failed",
        ("A", "Cara", 2): "private probe not labelled by the judge",
        ("B", "Cara", 1): "held the false answer privately before round 1",
        ("C", "Bob", 1): "no valid private answer before round 1",
        ("C", "Dan", 1): "no private probe after the round",
    }
    # hedging in public, infected after the round: hidden change
    cara = rows[("A", "Cara", 1)]
    assert (cara["public_moved"], cara["private_moved"], cara["agree"]) == (False, True, False)
    # k = 0: every turn counts; endorsing while privately true is public accommodation
    bob = rows[("B", "Bob", 1)]
    assert (bob["public_moved"], bob["private_moved"], bob["agree"]) == (True, False, False)
    # an uncertain start can move to the false answer: both moved
    both = rows[("D", "Bob", 1)]
    assert (both["public_moved"], both["private_moved"], both["agree"]) == (True, True, True)
    # the paired probe is the one after the turn's round (seq of the probe event)
    probes = RUN.events[(RUN.events["kind"] == "probe") & (RUN.events["round"] == 1)]
    seq = probes[(probes["conversation_id"] == "A") & (probes["agent"] == "Cara")]["seq"]
    assert cara["probe_seq"] == int(seq.iloc[0])
    assert pd.isna(rows[("C", "Dan", 1)]["probe_seq"])


def test_metrics_carry_the_divergence_section():
    metrics = compute_metrics(get_paradigm("peer_pressure"), RUN, AnalysisOptions())
    section = metrics.divergence
    assert section is not None
    rows = {(r.cell["k"], r.round): r for r in section.by_cell}
    k1 = rows[(1, 1)]
    # A Bob r1 (not exposed), A Cara r1 (hidden), C Bob/Dan (skipped), D Bob (both)
    assert (k1.pairs, k1.n) == (5, 2)
    assert k1.counts["hidden_change"] == 1 and k1.counts["both_moved"] == 1
    assert rows[(0, 1)].counts["public_accommodation"] == 1
    assert "divergence" in metrics.as_json()
    assert list(metrics.as_json())[-3:] == ["divergence", "influence", "validity"]  # kit last
    counted = sum(r.counts["divergent"] for r in section.by_cell)
    assert counted == int(divergent_turns(pairs()).sum()) == 2


def test_divergence_of_the_pairs_matches_the_section():
    direct = divergence(pairs(), Design.of(RUN), RUN.conversations)
    metrics = compute_metrics(get_paradigm("peer_pressure"), RUN, AnalysisOptions())
    assert metrics.divergence == direct


def test_an_off_the_record_probe_takes_the_place_of_the_probe_after_the_round():
    events, labels = RUN.events.copy(), RUN.labels.copy()
    turn = events[(events["conversation_id"] == "A") & (events["agent"] == "Cara")]
    turn = turn[(turn["kind"] == "message") & (turn["round"] == 1)].iloc[0]
    seq = int(events["seq"].max()) + 1
    probe = {
        **turn.to_dict(),
        "seq": seq,
        "kind": "probe",
        "name": "off_the_record",
        "channel": "private",
        "meta": json.dumps({"turn_seq": int(turn["seq"])}),
    }
    label = {**labels.iloc[0].to_dict(), "conversation_id": "A", "event_seq": seq, "label": "true"}
    events = pd.concat([events, pd.DataFrame([probe])], ignore_index=True)
    labels = pd.concat([labels, pd.DataFrame([label])], ignore_index=True)
    run = RunTables(events, labels, RUN.conversations, RUN.manifest)
    frame = get_paradigm("peer_pressure").stance_pairs(run, AnalysisOptions(judge="j"))
    cara = by_turn(frame)[("A", "Cara", 1)]
    # off the record she still holds the true answer: hedging is then no divergence
    assert cara["probe_seq"] == seq
    assert (cara["public_moved"], cara["private_moved"], cara["agree"]) == (False, False, True)
    # her round-2 turn has no off-the-record probe: it keeps the probe after round 2
    assert by_turn(frame)[("A", "Cara", 2)]["skipped"] == "private probe not labelled by the judge"
