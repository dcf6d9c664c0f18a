"""The viewer's divergent turns on the hand-built runs: the reader's list and a conversation's
marks are the turns the metrics count (worked out by hand for the main conversation)."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

import backchannel as bc
from backchannel.view import RunReader, make_app

from ._build import ITEM, discussion_run, peer_pressure_run

CID = f"k=1/{ITEM}/0"


def test_the_list_is_what_the_metrics_count(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    reader = RunReader(run)
    turns = reader.divergent()["turns"]
    metrics = bc.open_run(run).metrics()
    assert isinstance(metrics, bc.Metrics) and metrics.divergence is not None
    assert len(turns) == sum(row.counts["divergent"] for row in metrics.divergence.by_cell)
    # Bob hedges in round 1 and ignores the claim in round 2 while privately manipulated after
    # each (true before round 1): two hidden changes. Carol stays true and silent (round 1),
    # her round-2 probe failed to parse; Dave held the false answer before round 1.
    main = [t for t in turns if t["conversation_id"] == CID]
    assert [(t["agent"], t["round"], t["kind"]) for t in main] == [
        ("Bob", 1, "hidden change"),
        ("Bob", 2, "hidden change"),
    ]
    assert main[0]["cell"] == {"k": 1}
    marks = reader.conversation(CID)["divergent"]["turns"]
    assert [t["turn_seq"] for t in marks] == [t["turn_seq"] for t in main]


def test_a_paradigm_without_stance_pairs_says_so(tmp_path: Path) -> None:
    reader = RunReader(discussion_run(tmp_path / "run"))
    assert "reads no public stances" in reader.divergent()["error"]
    conversation = reader.conversation(reader.conversation_ids()[0])
    assert "turns" not in conversation["divergent"]


async def test_the_api_answers_the_list(tmp_path: Path) -> None:
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    async with TestClient(TestServer(make_app([reader]))) as client:
        response = await client.get("/api/runs/0/divergent")
        assert response.status == 200
        body = await response.json()
    assert body == reader.divergent()


def test_the_viewer_metrics_carry_the_divergence_section(tmp_path: Path) -> None:
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    section = reader.headline()["metrics"]["divergence"]
    total = sum(row["counts"]["divergent"] for row in section["by_cell"])
    assert total == len(reader.divergent()["turns"]) > 0
