"""The testimony citation graph, as the paradigm's view hook sends it to the viewer, on a
hand-built conversation (see _build.py).

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


def citations_of(page: dict[str, Any]) -> dict[str, Any]:
    """The page's last panel: the citation judges' switch, or the note saying why none."""
    return page["panels"][-1]


def judges_of(panel: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {c["label"]: c["panels"] for c in panel["choices"]}


async def graph_of(client: TestClient, cid: str, judge: str = "citations") -> dict[str, Any]:
    response = await client.get("/api/runs/0/conversation", params={"id": cid})
    assert response.status == 200
    return judges_of(citations_of((await response.json())["page"]))[judge][0]


def tables_of(panels: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in panels if p["type"] == "table"}


async def test_the_graph_has_the_hand_worked_nodes_edges_and_roots(client: TestClient) -> None:
    response = await client.get("/api/runs/0/conversation", params={"id": "condition=C1/g1/0"})
    switch = citations_of((await response.json())["page"])
    assert switch["type"] == "switch" and switch["name"] == "citation-judge"
    assert [c["label"] for c in switch["choices"]] == ["citations", "citations_llm"]
    graph = await graph_of(client, "condition=C1/g1/0")
    assert graph["type"] == "graph"
    nodes = {n["event"]: n for n in graph["nodes"]}
    testimonies = {s: n for s, n in nodes.items() if n["data"]["kind"] == "testimony"}
    assert {s: n["data"]["root"] for s, n in testimonies.items()} == {
        0: "false",
        1: "true",
        2: "other",
    }
    assert testimonies[1]["lines"][3] == "TRUE ROOT" and testimonies[1]["border"] == "strong"
    assert testimonies[0]["lines"][3] == "FALSE ROOT" and testimonies[0]["border"] == "dashed"
    assert sorted((e["source"], e["target"]) for e in graph["edges"]) == [
        ("e3", "e1"),
        ("e4", "e0"),
        ("e6", "e1"),
        ("e6", "e4"),
        ("e8", "e3"),
    ]
    by_edge = {(e["source"], e["target"]): e for e in graph["edges"]}
    assert "cites [S:Ben@R1], supporting jar" in by_edge[("e6", "e4")]["title"]
    assert "supporting" not in by_edge[("e8", "e3")]["title"]
    assert by_edge[("e4", "e0")]["tone"] == "negative" and by_edge[("e4", "e0")]["dashed"]
    carries = {s: n["data"]["carries"] for s, n in nodes.items() if s not in testimonies}
    assert carries == {3: "true", 4: "false", 5: "none", 6: "both", 7: "none", 8: "true"}
    assert nodes[6]["lines"][2] == "holds true + false roots"
    assert {s: n["lines"][1] for s, n in nodes.items() if s not in testimonies} == {
        3: "R1 · 1 citation", 4: "R1 · 1 citation", 5: "R1 · no claims",
        6: "R2 · 2 citations", 7: "R2 · 0 citations", 8: "R2 · 1 citation",
    }  # fmt: skip
    assert nodes[5]["data"]["agent"] == GRAPH_AGENT
    assert nodes[5]["lines"][2:] == ["extraction failed", "parse_failure"]
    assert nodes[5]["border"] == "dotted" and nodes[5]["tone"] == "warning"


async def test_citations_that_do_not_resolve_and_failed_extractions_are_shown(
    client: TestClient,
) -> None:
    response = await client.get("/api/runs/0/conversation", params={"id": "condition=C1/g1/0"})
    panels = judges_of(citations_of((await response.json())["page"]))["citations"]
    tables = tables_of(panels)
    unresolved = tables["unresolved"]["rows"]
    assert [(r["event"], r["data"]["reason"]) for r in unresolved] == [
        (4, "later_round"),
        (8, "source_not_in_conversation"),
    ]
    assert [r["cells"][1]["parts"][0]["text"] for r in unresolved] == ["[S:Ann@R1]", "[S:Zed@R1]"]
    failed = tables["extraction-failures"]["rows"]
    assert [(r["event"], r["data"]["status"]) for r in failed] == [(5, "parse_failure")]
    nodes = {n["event"]: n for n in panels[0]["nodes"]}
    assert (nodes[4]["lines"][3], nodes[8]["lines"][3]) == ("⚠ 1 unresolved", "⚠ 1 unresolved")
    assert nodes[3]["lines"][3] == ""


async def test_the_layout_is_by_round_in_agent_order(client: TestClient) -> None:
    graph = await graph_of(client, "condition=C1/g1/0")
    assert graph["columns"] == [[106.0, "testimonies (T1)"], [346.0, "R1"], [586.0, "R2"]]
    at = {n["event"]: (n["x"], n["y"]) for n in graph["nodes"]}
    assert at == {
        2: (106.0, 52.0), 0: (106.0, 138.0), 1: (106.0, 224.0),
        3: (346.0, 52.0), 4: (346.0, 138.0), 5: (346.0, 224.0),
        6: (586.0, 52.0), 7: (586.0, 138.0), 8: (586.0, 224.0),
    }  # fmt: skip
    assert (graph["width"], graph["height"]) == (692, 276)


async def test_another_citation_judge_has_its_own_graph(client: TestClient) -> None:
    response = await client.get("/api/runs/0/conversation", params={"id": "condition=C1/g1/0"})
    panels = judges_of(citations_of((await response.json())["page"]))["citations_llm"]
    graph = panels[0]
    assert [(e["source"], e["target"]) for e in graph["edges"]] == [("e3", "e0")]
    nodes = {n["event"]: n for n in graph["nodes"]}
    assert nodes[3]["data"]["carries"] == "false"
    # the statements this judge did not label are listed, not taken as "no claims"
    failed = tables_of(panels)["extraction-failures"]["rows"]
    assert [(r["event"], r["data"]["status"]) for r in failed] == [
        (s, "not_labelled") for s in (4, 5, 6, 7, 8)
    ]


async def test_a_conversation_without_citations_says_so(client: TestClient) -> None:
    response = await client.get("/api/runs/0/conversation", params={"id": "condition=C1/g2/0"})
    panel = citations_of((await response.json())["page"])
    assert panel["type"] == "prose" and "no citation judge labelled it" in panel["text"]


async def test_a_testimony_conversation_without_statements_says_so(tmp_path: Path) -> None:
    reader = RunReader(build_testimony_run(tmp_path / "run"))
    try:
        data = reader.conversation("model=sim/s1/0")
        assert data is not None
        panel = citations_of(data["page"])
        assert panel["type"] == "prose" and "no citation judge" in panel["text"]
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
        judges = judges_of(citations_of(data["page"]))
        (error,) = judges["citations_llm"]
        assert error["type"] == "prose" and "cannot be read" in error["text"]
        assert "--as citations_llm" in error["text"]
        assert len(judges["citations"][0]["edges"]) == 5  # the other judge's graph is unharmed
    finally:
        reader.close()
