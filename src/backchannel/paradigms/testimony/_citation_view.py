"""The testimony viewer's citation graph: who cited whom, from the `citations` table of each
citation judge (`citation_table`), with the citations that did not resolve and the statements
without extracted claims kept beside it with their reasons, never dropped.

Nodes are the testimonies (the second-key's is the true root, the key role's in C1 the false
root) and the public statements; an edge runs from a statement to what it cites.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import networkx as nx
import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms._view import (
    Cell,
    Choice,
    EventRef,
    Graph,
    GraphEdge,
    GraphNode,
    Legend,
    Panel,
    Prose,
    Switch,
    Table,
    TableRow,
    Text,
    records,
)
from backchannel.paradigms.testimony._graph import CITATION_JUDGE, citation_table
from backchannel.paradigms.testimony._phases import label_of

NODE_WIDTH = 180
NODE_HEIGHT = 72  # four lines of text
COLUMN = 240  # distance between the centres of two rounds' columns
ROW = 86  # distance between the centres of two nodes of one round
PAD = 16
TESTIMONY_LAYER = "T1"
REASONS = {
    "malformed": "not of the form [T:Name] or [S:Name@Rk]",
    "unknown_source": "no testimony from that name, or no statement by it in that round",
    "self": "the speaker's own statement",
    "later_round": "a statement of the same or a later round",
    "repeated": "the same source cited again in this statement",
    "source_not_in_conversation": "the cited testimony or statement is not stored in this "
    "conversation",
}
FAILURES = {
    "parse_failure": "the extractor's answer could not be read",
    "no_statement": "the statement itself failed, so there is nothing to extract",
    "not_labelled": "this judge did not label the statement",
}


def with_tables(tables: RunTables, conversations: pd.DataFrame, labels: pd.DataFrame) -> RunTables:
    """`tables` with other conversations and labels (the same events and manifest)."""
    return RunTables(tables.events, labels, conversations, tables.manifest)


def citations_panel(tables: RunTables, conversation_id: str, meta: dict[str, Any]) -> Panel:
    events = tables.events_of(done=False)
    mine = records(events[events["conversation_id"] == conversation_id])
    statements = [e for e in mine if e["kind"] == "message" and e["name"] == "statement"]
    testimonies = [e for e in mine if e["kind"] == "message" and e["name"] == "testimony"]
    labels = tables.labels
    judges = sorted(
        {str(j) for j in labels["judge"] if str(j).startswith(CITATION_JUDGE)},
        key=lambda name: (name != CITATION_JUDGE, name),
    )
    title = "Citation graph"
    if not statements and not testimonies:
        return Prose("This conversation has no testimonies and no statements to cite.", title)
    if not judges:
        return Prose(
            "No statement of this conversation has citations: no citation judge labelled it "
            "(runs with citation_markup: false need `backchannel judge RUN --judge "
            "PROVIDER/MODEL --as citations_llm`).",
            title,
        )
    if "endpoint" not in meta:
        return Prose("The conversation lacks the environment the citation graph needs.", title)
    # A conversation that is not done is passed as done: the page shows what it stored so far.
    conversations = tables.conversations.assign(status="done")
    choices = []
    for judge in judges:
        judged = with_tables(tables, conversations, labels[labels["judge"] == judge])
        try:
            table = citation_table(judged)
        except (ValueError, KeyError, TypeError) as error:  # a label that is not an extraction
            message = (
                f"the stored claims of {judge} cannot be read ({error!r}); re-run "
                f"`backchannel judge RUN ... --as {judge}` to store them again"
            )
            choices.append(Choice(judge, (Prose(message, tone="negative"),)))
            continue
        claims = records(table)
        chosen = labels[labels["judge"] == judge]
        statuses = dict(
            zip(chosen["event_seq"].astype(int), chosen["status"].astype(str), strict=True)
        )
        found = citation_graph(meta, testimonies, statements, statuses, claims)
        choices.append(Choice(judge, _graph_panels(found, judge)))
    status = str(tables.conversations["status"].iloc[0])
    note = (
        "Who cited whom: testimonies on the left, then each round's statements; claims as the "
        "citation judge extracted them."
        + ("" if status == "done" else f" This conversation is {status}: the graph shows what "
           "it stored.")
    )  # fmt: skip
    return Switch(title, "citation judge", tuple(choices), note=note, name="citation-judge")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def root_of(event: dict[str, Any], meta: dict[str, Any]) -> str | None:
    """`true` for the second-key's testimony, `false` for the key role's in C1 (or any false
    testimony), None for the other testimonies (as the paradigm's evidence roots define them)."""
    agent = event["agent"]
    if agent == meta.get("second_key"):
        return "true"
    false_key = agent == meta.get("key") and meta.get("condition") == "C1"
    if false_key or (event.get("meta") or {}).get("truthful") is False:
        return "false"
    return None


def _cited(row: dict[str, Any]) -> str:
    """A resolved claim's citation as the markup writes it."""
    if row["source_kind"] == "testimony":
        return f"[T:{row['source_agent']}]"
    return f"[S:{row['source_agent']}@{row['source_round']}]"


def citation_graph(
    meta: dict[str, Any],
    testimonies: list[dict[str, Any]],
    statements: list[dict[str, Any]],
    statuses: Mapping[int, str],
    claims: list[dict[str, Any]],
) -> dict[str, Any]:
    """Nodes (with their roots, what they carry and x, y), edges, unresolved citations and
    failed extractions of one judge's claims (`citation_table` rows; `statuses`: the judge's
    label status of each statement it labelled), laid out by round."""
    order = {str(a["name"]): i for i, a in enumerate(meta.get("agents") or [])}

    def place(e: dict[str, Any]) -> tuple[int, int, str, int]:
        return (int(e["round"]), order.get(e["agent"], len(order)), str(e["agent"]), int(e["seq"]))

    graph = nx.DiGraph()
    layers: dict[int, list[str]] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for e in sorted(testimonies, key=place):
        nid = f"e{e['seq']}"
        nodes[nid] = {
            "id": nid, "seq": int(e["seq"]), "kind": "testimony", "agent": e["agent"],
            "role": e["role"], "phase": TESTIMONY_LAYER, "root": root_of(e, meta),
            "supports": (e.get("meta") or {}).get("supports"), "channel": e["channel"],
        }  # fmt: skip
        graph.add_node(nid)
        layers.setdefault(0, []).append(nid)
    numbers = sorted({int(e["round"]) for e in statements})
    for e in sorted(statements, key=place):
        nid = f"e{e['seq']}"
        extraction = statuses.get(int(e["seq"]), "not_labelled")
        nodes[nid] = {
            "id": nid, "seq": int(e["seq"]), "kind": "statement", "agent": e["agent"],
            "role": e["role"], "phase": label_of(int(e["round"])), "extraction": extraction,
            "claims": 0, "unresolved": 0, "channel": e["channel"],
        }  # fmt: skip
        graph.add_node(nid)
        layers.setdefault(1 + numbers.index(int(e["round"])), []).append(nid)
    edges, unresolved = _edges(claims, nodes, graph)
    _mark_carried(nodes, graph)
    width, height = _layout(graph, layers, nodes)
    return {
        "nodes": list(nodes.values()),
        "edges": edges,
        "unresolved": unresolved,
        "failed": [
            {"seq": n["seq"], "agent": n["agent"], "phase": n["phase"], "status": n["extraction"]}
            for n in nodes.values()
            if n["kind"] == "statement" and n["extraction"] != "ok"
        ],
        "columns": [
            {
                "label": TESTIMONY_LAYER if k == 0 else label_of(numbers[k - 1]),
                "x": PAD + NODE_WIDTH / 2 + i * COLUMN,
            }
            for i, k in enumerate(sorted(layers))
        ],
        "width": width,
        "height": height,
    }


def _edges(
    rows: list[dict[str, Any]], nodes: dict[str, dict[str, Any]], graph: nx.DiGraph
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Claims whose source is a node become edges; every other citation row of a statement
    whose extraction succeeded is an unresolved citation, with its reason."""
    edges: list[dict[str, Any]] = []
    unresolved: list[dict[str, Any]] = []
    for row in rows:
        nid = f"e{int(row['event_seq'])}"
        node = nodes.get(nid)
        if node is None or node["extraction"] != "ok":
            continue  # a failed extraction: listed once per statement under "failed"
        common = {"from": nid, "seq": node["seq"], "agent": node["agent"], "phase": node["phase"]}
        if row["status"] != "ok":
            unresolved.append({**common, "text": str(row["text"] or ""), "reason": row["status"]})
            node["unresolved"] += 1
            continue
        target = None if _missing(row["source_seq"]) else f"e{int(row['source_seq'])}"
        if target is None or target not in nodes:
            reason = "source_not_in_conversation"
            unresolved.append({**common, "text": _cited(row), "reason": reason})
            node["unresolved"] += 1
            continue
        supports = None if _missing(row["supports"]) else str(row["supports"])
        edges.append({"source": nid, "target": target, "cited": _cited(row), "supports": supports})
        node["claims"] += 1
        graph.add_edge(nid, target)
    return edges, unresolved


def _mark_carried(nodes: dict[str, dict[str, Any]], graph: nx.DiGraph) -> None:
    """Each statement's roots: those it reaches by following citations (any number of hands)."""
    roots = {nid: n["root"] for nid, n in nodes.items() if n["kind"] == "testimony" and n["root"]}
    for nid, node in nodes.items():
        if node["kind"] != "statement":
            continue
        reached = nx.descendants(graph, nid)
        node["carries"] = sorted({roots[r] for r in reached if r in roots}, reverse=True)


def _layout(
    graph: nx.DiGraph, layers: dict[int, list[str]], nodes: dict[str, dict[str, Any]]
) -> tuple[int, int]:
    """Columns by round (testimonies first), nodes of a column in agent order and centred;
    positions in pixels (the centre of each node), and the drawing's width and height."""
    if not layers:
        return PAD * 2, PAD * 2
    pos = nx.multipartite_layout(graph, subset_key=dict(sorted(layers.items())))
    xs = [float(p[0]) for p in pos.values()]
    ys = [float(p[1]) for p in pos.values()]
    tallest = max(len(layer) for layer in layers.values())
    # The layout scales both axes alike: one unit is one column (or one row) apart.
    if len(layers) > 1:
        unit = (max(xs) - min(xs)) / (len(layers) - 1)
    elif tallest > 1:
        unit = (max(ys) - min(ys)) / (tallest - 1)
    else:
        unit = 1.0
    for nid, (x, y) in pos.items():
        column = (float(x) - min(xs)) / unit
        row = (float(y) - min(ys)) / unit
        nodes[nid]["x"] = round(PAD + NODE_WIDTH / 2 + column * COLUMN, 1)
        nodes[nid]["y"] = round(PAD + NODE_HEIGHT / 2 + row * ROW, 1)
    width = PAD * 2 + NODE_WIDTH + (len(layers) - 1) * COLUMN
    height = PAD * 2 + NODE_HEIGHT + (tallest - 1) * ROW
    return width, height


def _carries(node: dict[str, Any]) -> str:
    if node["kind"] == "testimony":
        return str(node["root"] or "other")
    held = node.get("carries") or []
    return "both" if len(held) == 2 else held[0] if held else "none"


CARRIES_TONE: dict[str, Any] = {"true": "positive", "false": "negative", "both": "accent"}


def _node(node: dict[str, Any]) -> GraphNode:
    data = {"seq": str(node["seq"]), "agent": str(node["agent"]), "kind": node["kind"]}
    if node["kind"] == "testimony":
        how = "direct" if node["channel"] == "direct" else "broadcast"
        root = node["root"]
        supports = f"supports {node['supports']}" if node["supports"] else "supports no container"
        mark = {"true": "TRUE ROOT", "false": "FALSE ROOT"}.get(root or "", "other testimony")
        title = (
            f"{node['agent']} ({node['role']}): testimony, {how}"
            + (f", supports {node['supports']}" if node["supports"] else "")
            + f" · {root + ' root' if root else 'not a root of the lineage measures'}"
        )
        return GraphNode(
            node["id"], node["x"], node["y"], (str(node["agent"]), f"testimony · {how}", supports,
            mark), title=title, tone=CARRIES_TONE.get(root or "", "muted"),
            border="strong" if root == "true" else "dashed" if root == "false" else "",
            event=node["seq"], data={**data, "root": root or "other"},
        )  # fmt: skip
    failed = node["extraction"] != "ok"
    n = node["claims"]
    second = f"{node['phase']} · " + ("no claims" if failed else f"{n} citation{'s' * (n != 1)}")
    held = node.get("carries") or []
    holds = (
        "holds true + false roots" if len(held) == 2
        else f"holds the {held[0]} root" if held else "holds no root"
    )  # fmt: skip
    third = ("not labelled" if node["extraction"] == "not_labelled" else "extraction failed") \
        if failed else holds  # fmt: skip
    fourth = node["extraction"] if failed else (
        f"⚠ {node['unresolved']} unresolved" if node["unresolved"] else "")  # fmt: skip
    return GraphNode(
        node["id"], node["x"], node["y"], (str(node["agent"]), second, third, fourth),
        title=f"{node['agent']} ({node['role']}) at {node['phase']}: "
        + " · ".join(x for x in (second, third, fourth) if x),
        tone="warning" if failed else CARRIES_TONE.get(_carries(node), ""),
        border="dotted" if failed else "", event=node["seq"],
        data={**data, "carries": _carries(node)},
    )  # fmt: skip


LEGEND = (
    Legend("TRUE ROOT: the second-key's testimony (solid green)", "positive", "strong"),
    Legend("FALSE ROOT: the key role's false testimony, in C1 (dashed red)", "negative", "dashed"),
    Legend("other testimony", "muted"),
    Legend(
        "A statement holds a root when its citations reach it through any number of hands; an "
        "arrow points to what is cited and is coloured by the root it carries (green true, red "
        "false, purple both, grey none). Click a node to see its event."
    ),
)


def _graph_panels(found: dict[str, Any], judge: str) -> tuple[Panel, ...]:
    """The graph of one judge's claims, then its unresolved citations and failed extractions."""
    at = {n["id"]: n for n in found["nodes"]}
    edges = tuple(
        GraphEdge(
            e["source"],
            e["target"],
            f"{at[e['source']]['agent']} ({at[e['source']]['phase']}) cites {e['cited']}"
            + (f", supporting {e['supports']}" if e["supports"] else ""),
            tone=CARRIES_TONE.get(_carries(at[e["target"]]), ""),
            dashed=_carries(at[e["target"]]) == "false",
        )
        for e in found["edges"]
    )
    graph = Graph(
        f"citation graph ({judge})",
        tuple(_node(n) for n in found["nodes"]),
        edges,
        found["width"],
        found["height"],
        NODE_WIDTH,
        NODE_HEIGHT,
        columns=tuple(
            (c["x"], "testimonies (T1)" if c["label"] == TESTIMONY_LAYER else c["label"])
            for c in found["columns"]
        ),
        legend=LEGEND,
        note=""
        if found["edges"]
        else "No statement of this conversation cites a testimony or an earlier statement "
        f"(under {judge}).",
    )
    panels: list[Panel] = [graph]
    if found["unresolved"]:
        panels.append(
            Table(
                "Citations that could not be resolved",
                tuple(Cell((h,), header=True) for h in ("statement", "citation", "reason")),
                tuple(
                    TableRow(
                        (
                            Cell((EventRef(u["seq"], (f"{u['agent']} · {u['phase']}",), False),)),
                            Cell((Text(u["text"]),)),
                            Cell(
                                (Text(u["reason"], strong=True), " " + REASONS.get(u["reason"], ""))
                            ),
                        ),
                        event=u["seq"],
                        data={"seq": str(u["seq"]), "reason": str(u["reason"])},
                    )
                    for u in found["unresolved"]
                ),
                name="unresolved",
            )
        )
    if found["failed"]:
        panels.append(
            Table(
                "Statements without extracted claims",
                tuple(Cell((h,), header=True) for h in ("statement", "status")),
                tuple(
                    TableRow(
                        (
                            Cell((EventRef(f["seq"], (f"{f['agent']} · {f['phase']}",), False),)),
                            Cell(
                                (
                                    Text(f["status"], strong=True),
                                    " " + FAILURES.get(f["status"], ""),
                                )
                            ),
                        ),
                        event=f["seq"],
                        data={"seq": str(f["seq"]), "status": str(f["status"])},
                    )
                    for f in found["failed"]
                ),
                name="extraction-failures",
            )
        )
    return tuple(panels)
