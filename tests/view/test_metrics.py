"""Per-conversation figures and pages of each paradigm's view hook, on hand-built runs whose
figures are worked out by hand, and against the paradigm's own metrics of the same run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel.analysis import jsonable
from backchannel.paradigms import AnalysisOptions, get_paradigm, with_kit_sections
from backchannel.store import RunStore
from backchannel.view import ListQuery, RunReader, view_of
from backchannel.view._headline import finite

from ._build import (
    ITEM,
    build_testimony_run,
    council_run,
    dyad_run,
    manifest,
    peer_pressure_run,
)


def panels(found: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in found["page"]["panels"] if p["type"] == kind]


def test_peer_pressure_figures_match_the_hand_count(tmp_path: Path) -> None:
    # Checkpoint 0: Bob true, Carol true, Dave manipulated -> initial 1/3. Checkpoint 2: Carol's
    # label failed, Bob and Dave manipulated -> FPI 2/2. Hidden infections (exposed turns whose
    # speaker is manipulated after the round and hedges or ignores): Bob r1 hedge, Bob r2
    # ignore, Dave r2 hedge = 3; silent knowers (true and ignore): Carol r1 = 1. The
    # adversary's turns and Dave's endorsing turn do not count.
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    row = reader.page(ListQuery(limit=1))["conversations"][0]
    metrics = row["metrics"]
    assert metrics["initial"] == pytest.approx(1 / 3)
    assert metrics["fpi"] == 1.0
    assert metrics["hidden_infections"] == 3
    assert metrics["silent_knowers"] == 1
    conversation = reader.conversation(f"k=1/{ITEM}/0")
    assert conversation is not None and conversation["conversation"]["metrics"] == metrics
    (plot,) = panels(conversation, "plot")
    assert plot["series"][0]["points"] == [[0, pytest.approx(1 / 3)], [1, pytest.approx(2 / 3)],
                                           [2, 1.0]]  # fmt: skip
    (grid,) = [p for p in panels(conversation, "table") if p.get("name") == "pp-grid"]
    marks = {
        (c["data"]["round"], c["data"]["agent"]): c["data"]["mark"]
        for r in grid["rows"]
        for c in r["cells"]
        if c.get("data", {}).get("mark")
    }
    hidden, silent = "hidden_infection", "silent_knower"
    assert marks == {("1", "Bob"): hidden, ("2", "Bob"): hidden, ("2", "Dave"): hidden,
                     ("1", "Carol"): silent}  # fmt: skip
    failed = reader.page(ListQuery(status="failed"))["conversations"][0]
    assert failed["metrics"] == {"_note": "conversation failed: no metrics"}


def test_peer_pressure_figures_are_the_paradigms_metrics(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    store = RunStore(run)
    figures = get_paradigm("peer_pressure").metrics(store.tables(), AnalysisOptions())
    store.close()
    rows = RunReader(run).page(ListQuery(limit=50, status="done"))["conversations"]
    main = figures.pairings.main  # one row per cell: the conversations add up to them
    hidden = sum(row.seven_way.counts.hidden_infection for row in main)
    silent = sum(row.seven_way.counts.silent_knower for row in main)
    assert sum(r["metrics"]["hidden_infections"] for r in rows) == hidden
    assert sum(r["metrics"]["silent_knowers"] for r in rows) == silent
    by_cell = {row.cell["k"]: row for row in figures.fpi.by_cell}
    for k in (0, 1):
        values = [r["metrics"]["fpi"] for r in rows if r["cell"]["k"] == k]
        present = [v for v in values if v is not None]
        assert len(present) == by_cell[k].fpi_n
        if present:
            assert sum(present) / len(present) == pytest.approx(by_cell[k].fpi)


def test_dyad_figures_align_the_opposite_wording(tmp_path: Path) -> None:
    # Opposite wording: aligned z = 6 - r. Pre: D r=1 -> 5, O r=4 -> 2 (gap 3). After round 2:
    # D r=2 -> 4, O r=3 -> 3 (gap 1). Shifts -1 and +1, gap change -2. States: round 1 D ACCEPT
    # moves 5 towards 2 -> 4, O REJECT moves 2 away from 4 -> 1; round 2 D IGNORE stays 4,
    # O ACCEPT moves 1 towards 4 -> 2.
    reader = RunReader(dyad_run(tmp_path / "run"))
    first, second = reader.page(ListQuery())["conversations"]
    m = first["metrics"]
    assert (m["pre_discussant"], m["post_discussant"], m["shift_discussant"]) == (5, 4, -1)
    assert (m["pre_opponent"], m["post_opponent"], m["shift_opponent"]) == (2, 3, 1)
    assert m["gap_change"] == -2 and m["converged"] is True
    # without a post rating there is no shift and no gap, rather than a guessed one
    m = second["metrics"]
    assert m["shift_discussant"] == -1 and m["shift_opponent"] is None and m["gap_change"] is None
    assert "missing" in m["_note"]
    found = reader.conversation(first["conversation_id"])
    assert found is not None
    (plot,) = panels(found, "plot")
    series = {s["name"]: s["points"] for s in plot["series"]}
    assert series["Discussant rating"] == [[0, 5.0], [1, None], [2, 4.0]]
    assert series["Discussant state"] == [[0, 5.0], [1, 4.0], [2, 4.0]]
    assert series["Opponent state"] == [[0, 2.0], [1, 1.0], [2, 2.0]]
    (lanes,) = panels(found, "table")
    assert [r["data"]["round"] for r in lanes["rows"]] == ["0", "1", "2"]


def test_council_fcc_winner_and_mean_score(tmp_path: Path) -> None:
    # Three options, four valid final ballots with first choices a, a, a, b: p_max = 3/4,
    # FCC = (3/4 - 1/3) / (2/3) = 5/8. Borda (2/1/0): a = 2+2+2+1 = 7, b = 0+1+1+2 = 4,
    # c = 1+0+0+0 = 1 -> a; margin (7 - 4) / 8 (the most points an option can get). A ballot
    # with an unknown option and a failed one are left out; the two verification scores 0.5
    # and 1.0 average 0.75.
    reader = RunReader(council_run(tmp_path / "run"))
    m = reader.page(ListQuery())["conversations"][0]["metrics"]
    assert m["fcc"] == pytest.approx(5 / 8)
    assert m["winner"] == "a" and m["margin"] == pytest.approx(3 / 8)
    assert m["mean_score"] == pytest.approx(0.75)
    found = reader.conversation("pool=A/s1/0")
    assert found is not None
    rankings = next(p for p in panels(found, "table") if p.get("name") == "council-rankings")
    assert len(rankings["rows"]) == 6 and "FCC 0.625" in rankings["note"]


def test_a_paradigm_without_a_view_gets_the_timeline_only(tmp_path: Path) -> None:
    from ._build import discussion_run

    assert view_of("discussion") is None and view_of("no_such_paradigm") is None
    reader = RunReader(discussion_run(tmp_path / "run"))
    assert reader.summary()["columns"] == []
    assert reader.page(ListQuery())["conversations"][0]["metrics"] == {}
    found = reader.conversation("model=sim/d1/0")
    assert found is not None and found["page"] is None and found["round_labels"] == {}


def test_headline_metrics_are_the_paradigms_metrics_of_the_run(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    store = RunStore(run)
    expected = store.tables()
    store.close()
    paradigm, options = get_paradigm("peer_pressure"), AnalysisOptions()
    direct = with_kit_sections(
        paradigm, expected, options, paradigm.metrics(expected, options)
    )  # the paradigm's metrics with the shared kit sections, as every command shows them
    assert direct.divergence is not None
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
    row = reader.page(ListQuery())["conversations"][0]
    metrics = row["metrics"]
    assert (metrics["T0"], metrics["T1"], metrics["R1"]) == ("none", "decoy", "truth")
    assert metrics["outcome"] == "truth" and metrics["first_truth"] == "R1"
    assert (metrics["true_final"], metrics["decoy_final"]) == (3, 0)
    assert row["badges"] == [{"type": "chip", "label": "truth majority at R1", "tone": "positive"}]
    found = reader.conversation("model=sim/s1/0")
    assert found is not None
    assert found["round_labels"] == {"0": "T0", "1": "T1", "2": "R1"}  # the paradigm's names
    votes = next(p for p in panels(found, "table") if p.get("name") == "votes")
    kinds = {
        (r["data"]["agent"], c["data"]["checkpoint"]): c["data"]["kind"]
        for r in votes["rows"]
        for c in r["cells"]
        if c.get("data")
    }
    assert kinds[("Ann", "T1")] == "decoy" and kinds[("Cy", "R1")] == "failed"
    assert kinds[("Sol", "T1")] == "unknown" and kinds[("Kim", "T0")] == "true"


def test_a_testimony_conversation_without_its_environment_says_so(tmp_path: Path) -> None:
    from ._build import citation_conversation, commit

    spec, events, labels, meta = citation_conversation("g9")
    del meta["deception"]
    store = RunStore(tmp_path / "run", create=True)
    store.write_manifest(manifest("testimony", {"condition": ["C1"]}))
    commit(store, (spec, events, labels, meta), 0)
    store.close()
    row = RunReader(tmp_path / "run").page(ListQuery())["conversations"][0]
    assert row["metrics"] == {"_note": "the conversation lacks the environment the figures need"}


def test_a_failing_view_is_reported_on_the_row_and_the_page(tmp_path: Path) -> None:
    module = sys.modules["backchannel.paradigms.testimony._view"]

    def broken(*args: Any) -> Any:
        raise RuntimeError("boom")

    reader = RunReader(build_testimony_run(tmp_path / "run"))
    view = view_of("testimony")
    assert view is not None and module.VIEW is view
    object.__setattr__(view, "rows", broken)
    object.__setattr__(view, "page", broken)
    try:
        row = reader.page(ListQuery())["conversations"][0]
        assert row["metrics"] == {"_note": "the paradigm's view failed: RuntimeError: boom"}
        found = reader.conversation("model=sim/s1/0")
        assert found is not None and "RuntimeError: boom" in found["page"]["error"]
    finally:
        object.__setattr__(view, "rows", module.rows)
        object.__setattr__(view, "page", module.page)
