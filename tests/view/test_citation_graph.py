"""The testimony citation graph in the JSON API, on a hand-built conversation (see _build.py).

Worked out by hand from the stored claims (judge `citations`):
- roots: Sol's testimony (seq 1) is the true root, Kim's (seq 0, C1) the false root, Ann's
  (seq 2) another testimony;
- edges (citing -> cited): 3 -> 1, 4 -> 0, 6 -> 4, 6 -> 1, 8 -> 3;
- roots held: 3 true; 4 false; 6 both (false through Ben's R1 statement); 8 true (through
  Ann's R1); 7 none (no claims); 5 none (its extraction failed);
- unresolved: 4's `[S:Ann@R1]` (later_round) and 8's `[S:Zed@R1]` (Zed never spoke);
- layout: columns T1, R1, R2 at x = 106, 346, 586; three nodes each in agent order (Ann, Ben,
  the payload member; testimonies Ann, Kim, Sol) at y = 52, 138, 224; 692 x 276 pixels.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from backchannel.view import RunReader, make_app

from ._build import GRAPH_AGENT, build_testimony_run, citation_run


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient]:
    reader = RunReader(citation_run(tmp_path / "run"))
    async with TestClient(TestServer(make_app([reader]))) as client:
        yield client
    reader.close()


async def graph_of(client: TestClient, cid: str) -> dict[str, Any]:
    response = await client.get("/api/runs/0/conversation", params={"id": cid})
    assert response.status == 200
    return (await response.json())["details"]["citation_graph"]


async def test_the_graph_has_the_hand_worked_nodes_edges_and_roots(client: TestClient) -> None:
    found = await graph_of(client, "condition=C1/g1/0")
    assert found["note"] is None
    assert found["judges"] == ["citations", "citations_llm"]  # the markup judge first
    graph = found["graphs"]["citations"]
    nodes = {n["seq"]: n for n in graph["nodes"]}
    assert {s: n["root"] for s, n in nodes.items() if n["kind"] == "testimony"} == {
        0: "false",
        1: "true",
        2: None,
    }
    assert sorted((e["source"], e["target"]) for e in graph["edges"]) == [
        ("e3", "e1"),
        ("e4", "e0"),
        ("e6", "e1"),
        ("e6", "e4"),
        ("e8", "e3"),
    ]
    by_edge = {(e["source"], e["target"]): e for e in graph["edges"]}
    assert by_edge[("e6", "e4")]["cited"] == "[S:Ben@R1]"
    assert by_edge[("e6", "e4")]["supports"] == "jar"
    assert by_edge[("e8", "e3")]["supports"] is None
    carries = {s: n["carries"] for s, n in nodes.items() if n["kind"] == "statement"}
    assert carries == {3: ["true"], 4: ["false"], 5: [], 6: ["true", "false"], 7: [], 8: ["true"]}
    assert {s: n["phase"] for s, n in nodes.items()} == {
        0: "T1", 1: "T1", 2: "T1", 3: "R1", 4: "R1", 5: "R1", 6: "R2", 7: "R2", 8: "R2"
    }  # fmt: skip
    assert {s: n["claims"] for s, n in nodes.items() if n["kind"] == "statement"} == {
        3: 1, 4: 1, 5: 0, 6: 2, 7: 0, 8: 1
    }  # fmt: skip
    assert nodes[5]["agent"] == GRAPH_AGENT and nodes[5]["extraction"] == "parse_failure"


async def test_citations_that_do_not_resolve_and_failed_extractions_are_shown(
    client: TestClient,
) -> None:
    graph = (await graph_of(client, "condition=C1/g1/0"))["graphs"]["citations"]
    assert [(u["seq"], u["text"], u["reason"]) for u in graph["unresolved"]] == [
        (4, "[S:Ann@R1]", "later_round"),
        (8, "[S:Zed@R1]", "source_not_in_conversation"),
    ]
    assert [(f["seq"], f["status"]) for f in graph["failed"]] == [(5, "parse_failure")]
    nodes = {n["seq"]: n for n in graph["nodes"]}
    assert (nodes[4]["unresolved"], nodes[8]["unresolved"], nodes[3]["unresolved"]) == (1, 1, 0)


async def test_the_layout_is_by_round_in_agent_order(client: TestClient) -> None:
    graph = (await graph_of(client, "condition=C1/g1/0"))["graphs"]["citations"]
    assert graph["columns"] == [
        {"label": "T1", "x": 106.0},
        {"label": "R1", "x": 346.0},
        {"label": "R2", "x": 586.0},
    ]
    at = {n["seq"]: (n["x"], n["y"]) for n in graph["nodes"]}
    assert at == {
        2: (106.0, 52.0), 0: (106.0, 138.0), 1: (106.0, 224.0),
        3: (346.0, 52.0), 4: (346.0, 138.0), 5: (346.0, 224.0),
        6: (586.0, 52.0), 7: (586.0, 138.0), 8: (586.0, 224.0),
    }  # fmt: skip
    assert (graph["width"], graph["height"]) == (692, 276)


async def test_another_citation_judge_has_its_own_graph(client: TestClient) -> None:
    graph = (await graph_of(client, "condition=C1/g1/0"))["graphs"]["citations_llm"]
    assert [(e["source"], e["target"]) for e in graph["edges"]] == [("e3", "e0")]
    nodes = {n["seq"]: n for n in graph["nodes"]}
    assert nodes[3]["carries"] == ["false"]
    # the statements this judge did not label are listed, not taken as "no claims"
    assert [(f["seq"], f["status"]) for f in graph["failed"]] == [
        (s, "not_labelled") for s in (4, 5, 6, 7, 8)
    ]


async def test_a_conversation_without_citations_says_so(client: TestClient) -> None:
    found = await graph_of(client, "condition=C1/g2/0")
    assert found["graphs"] == {} and found["judges"] == []
    assert "no citation judge labelled it" in found["note"]


async def test_a_testimony_conversation_without_statements_says_so(tmp_path: Path) -> None:
    reader = RunReader(build_testimony_run(tmp_path / "run"))
    try:
        data = reader.conversation("model=sim/s1/0")
        assert data is not None
        found = data["details"]["citation_graph"]
        assert found["graphs"] == {} and "no citation judge" in found["note"]
    finally:
        reader.close()


def test_a_label_that_is_not_an_extraction_is_an_error_of_that_judge_only(
    tmp_path: Path,
) -> None:
    from backchannel.engine import Label
    from backchannel.store import RunStore

    from ._build import citation_conversation, commit, manifest

    spec, events, labels, meta = citation_conversation("g3")
    labels.append(Label(4, "citations_llm", "{not json", "ok", "", "llm"))
    store = RunStore(tmp_path / "run", create=True)
    store.write_manifest(manifest("testimony", {"condition": ["C1"]}))
    commit(store, (spec, events, labels, meta), 0)
    store.close()
    reader = RunReader(tmp_path / "run")
    try:
        data = reader.conversation("condition=C1/g3/0")
        assert data is not None
        graphs = data["details"]["citation_graph"]["graphs"]
        assert "cannot be read" in graphs["citations_llm"]["error"]
        assert "--as citations_llm" in graphs["citations_llm"]["error"]
        assert len(graphs["citations"]["edges"]) == 5  # the other judge's graph is unharmed
    finally:
        reader.close()
