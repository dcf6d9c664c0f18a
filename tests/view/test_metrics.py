"""Per-conversation figures of each paradigm view, on hand-built conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backchannel.store import RunStore
from backchannel.view import ListQuery, RunReader, view_for
from backchannel.view._headline import finite

from ._build import ITEM, build_testimony_run, manifest, peer_pressure_run


def test_peer_pressure_figures_match_the_hand_count(tmp_path: Path) -> None:
    # Checkpoint 0: Bob true, Carol true, Dave manipulated -> initial 1/3. Checkpoint 2: Carol's
    # label failed, Bob and Dave manipulated -> FPI 2/2. Hidden infections (manipulated and hedge
    # or ignore in public): Bob r1 hedge, Bob r2 ignore, Dave r2 hedge = 3; silent knowers (true
    # and ignore): Carol r1 = 1. The adversary's turns and Dave's endorsing turn do not count.
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    row = reader.page(ListQuery(limit=1))["conversations"][0]
    metrics = row["metrics"]
    assert metrics["initial"] == pytest.approx(1 / 3)
    assert metrics["fpi"] == 1.0
    assert metrics["hidden_infections"] == 3
    assert metrics["silent_knowers"] == 1
    assert metrics["curve"] == [[0, pytest.approx(1 / 3)], [1, pytest.approx(2 / 3)], [2, 1.0]]
    conversation = reader.conversation(f"k=1/{ITEM}/0")
    assert conversation is not None and conversation["conversation"]["metrics"] == metrics
    failed = reader.page(ListQuery(status="failed"))["conversations"][0]
    assert failed["metrics"] == {"_note": "conversation failed: no metrics"}


def _event(
    seq: int,
    kind: str,
    name: str,
    round: int,
    agent: str,
    role: str,
    value: Any,
    status: str = "ok",
) -> dict[str, Any]:
    channel = "public" if kind == "message" else "private"
    keys = ("seq", "kind", "name", "round", "turn", "agent", "role", "channel", "value", "status")
    values = (seq, kind, name, round, None, agent, role, channel, value, status)
    return dict(zip(keys, values, strict=True))


def test_dyad_figures_align_the_opposite_wording() -> None:
    # Opposite wording: aligned z = 6 - r. Pre: D r=1 -> 5, O r=4 -> 2 (gap 3). After round 2:
    # D r=2 -> 4, O r=3 -> 3 (gap 1). Shifts -1 and +1, gap change -2. States: round 1 D ACCEPT
    # moves 5 towards 2 -> 4, O REJECT moves 2 away from 4 -> 1; round 2 D IGNORE stays 4,
    # O ACCEPT moves 1 towards 4 -> 2.
    events = [
        _event(0, "rating", "self_rating", 0, "D", "discussant", 1),
        _event(1, "rating", "self_rating", 0, "O", "opponent", 4),
        _event(2, "message", "turn", 1, "D", "discussant", "ACCEPT"),
        _event(3, "message", "turn", 1, "O", "opponent", "REJECT"),
        _event(4, "rating", "self_rating", 1, "D", "discussant", None, "parse_failure"),
        _event(5, "rating", "self_rating", 1, "O", "opponent", 6),
        _event(6, "message", "turn", 2, "D", "discussant", "IGNORE"),
        _event(7, "message", "turn", 2, "O", "opponent", "ACCEPT"),
        _event(8, "rating", "self_rating", 2, "D", "discussant", 2),
        _event(9, "rating", "self_rating", 2, "O", "opponent", 3),
    ]
    meta = {"levels": {"wording": "opposite"}}
    m = view_for("dyad").row_metrics(meta, events, {}, None)
    assert (m["pre_discussant"], m["post_discussant"], m["shift_discussant"]) == (5, 4, -1)
    assert (m["pre_opponent"], m["post_opponent"], m["shift_opponent"]) == (2, 3, 1)
    assert (m["gap_pre"], m["gap_post"], m["gap_change"]) == (3, 1, -2)
    assert m["states"] == {"discussant": [5, 4, 4], "opponent": [2, 1, 2]}
    assert m["aligned"]["discussant"] == [(0, 5), (1, None), (2, 4)]
    # without a post rating there is no shift and no gap, rather than a guessed one
    m = view_for("dyad").row_metrics(meta, events[:-1], {}, None)
    assert m["shift_discussant"] == -1 and m["shift_opponent"] is None and m["gap_change"] is None


def test_council_fcc_winner_and_mean_score() -> None:
    # Three options, four valid final ballots with first choices a, a, a, b: p_max = 3/4,
    # FCC = (3/4 - 1/3) / (2/3) = 5/8. Borda (2/1/0): a = 2+2+2+1 = 7, b = 0+1+1+2 = 4,
    # c = 1+0+0+0 = 1 -> a. A ballot with an unknown option and a failed one are left out.
    options = {"item": {"options": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}}
    ranks = [["a", "c", "b"], ["a", "b", "c"], ["a", "b", "c"], ["b", "a", "c"], ["a", "z", "b"]]
    events = [
        _event(i, "ranking", "ranking", 3, f"e{i}", "evaluator", {"ranking": r})
        for i, r in enumerate(ranks)
    ]
    events.append(_event(5, "ranking", "ranking", 3, "e5", "evaluator", None, "parse_failure"))
    events.append(_event(6, "score", "verification", 3, "verifier", "verifier", 0.5))
    events.append(_event(7, "score", "verification", 3, "verifier", "verifier", 1.0))
    m = view_for("council").row_metrics(options, events, {}, None)
    assert m["fcc"] == pytest.approx(5 / 8)
    assert m["winner"] == "a" and m["ballots"] == 4
    assert m["mean_score"] == pytest.approx(0.75)


def test_a_paradigm_without_a_view_gets_no_columns() -> None:
    view = view_for("no_such_paradigm")
    assert view.columns == () and view.row_metrics({}, [], {}, None) == {}


def test_headline_metrics_are_the_paradigms_metrics_of_the_run(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    store = RunStore(run)
    expected = store.tables()
    store.close()
    from backchannel.analysis import jsonable
    from backchannel.paradigms import AnalysisOptions, get_paradigm

    direct = get_paradigm("peer_pressure").metrics(expected, AnalysisOptions())
    got = RunReader(run).headline()
    assert got == {"metrics": finite(json.loads(json.dumps(jsonable(direct), default=str)))}


def test_headline_metrics_say_why_they_are_missing(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", create=True)
    store.write_manifest(manifest())
    store.close()
    got = RunReader(tmp_path / "run").headline()
    assert got == {"error": "no conversation is done yet, so there are no metrics"}


def test_testimony_outcomes_by_checkpoint_match_the_hand_count(tmp_path: Path) -> None:
    # Analysed: Ann, Ben, Cy, Sol (Kim is the key role); a majority is 3 of 4.
    # T0: box, jar, jar, box -> 2 true, 2 decoy -> none. T1: jar, jar, jar, UNKNOWN -> decoy.
    # R1: box, box, (unreadable), box -> 3 true -> truth; the unreadable vote counts as failed.
    reader = RunReader(build_testimony_run(tmp_path / "run"))
    metrics = reader.page(ListQuery())["conversations"][0]["metrics"]
    assert [
        (t["checkpoint"], t["true"], t["decoy"], t["outcome"]) for t in metrics["timeline"]
    ] == [
        ("T0", 2, 2, "none"),
        ("T1", 0, 3, "decoy"),
        ("R1", 3, 0, "truth"),
    ]
    assert metrics["outcome"] == "truth" and metrics["first_truth"] == "R1"
    assert (metrics["true_final"], metrics["decoy_final"]) == (3, 0)
    assert view_for("testimony").row_metrics({}, [], {}, None) == {
        "_note": "the conversation lacks the environment the figures need"
    }
