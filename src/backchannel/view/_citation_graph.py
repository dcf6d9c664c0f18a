"""The citation graph of one testimony conversation: who cited whom, laid out by round.

Nodes are the testimonies (the roots: the second-key's is the true root, the key role's in C1
the false root) and the public statements; an edge runs from a statement to the testimony or
earlier statement it cites, exactly as the paradigm's `citations` table has it. A citation
that did not count or whose source is not in the conversation, and a statement whose
extraction failed, are kept with their reason, never dropped.
"""

from __future__ import annotations

import json
import math
from typing import Any

import networkx as nx
import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables
from backchannel.paradigms.testimony import CITATION_JUDGE, citation_table, label_of

NODE_WIDTH = 180
NODE_HEIGHT = 72  # four lines of text
COLUMN = 240  # distance between the centres of two rounds' columns
ROW = 86  # distance between the centres of two nodes of one round
PAD = 16
TESTIMONY_LAYER = "T1"


def citation_graphs(conversation: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The graph under every citation judge of the conversation (the markup one first).

    `conversation` has `conversation_id`, `status` and `meta`; `events` carry their `meta`,
    `text` and `labels` as the viewer's reader returns them.
    """
    meta = conversation.get("meta") or {}
    statements = [e for e in events if e["kind"] == "message" and e["name"] == "statement"]
    testimonies = [e for e in events if e["kind"] == "message" and e["name"] == "testimony"]
    judges = sorted(
        {
            str(label["judge"])
            for e in statements
            for label in e.get("labels") or []
            if str(label["judge"]).startswith(CITATION_JUDGE)
        },
        key=lambda name: (name != CITATION_JUDGE, name),
    )
    found: dict[str, Any] = {"judges": judges, "graphs": {}, "note": None}
    if not statements and not testimonies:
        found["note"] = "This conversation has no testimonies and no statements to cite."
        return found
    if not judges:
        found["note"] = (
            "No statement of this conversation has citations: no citation judge labelled it "
            "(runs with citation_markup: false need `backchannel judge RUN --judge "
            "PROVIDER/MODEL --as citations_llm`)."
        )
        return found
    if "endpoint" not in meta:
        found["note"] = "The conversation lacks the environment the citation graph needs."
        return found
    for judge in judges:
        try:
            table = citation_table(_one_conversation(conversation, events, judge))
        except (ValueError, KeyError, TypeError) as error:  # a label that is not an extraction
            found["graphs"][judge] = {
                "judge": judge,
                "error": f"the stored claims of {judge} cannot be read ({error!r}); re-run "
                f"`backchannel judge RUN ... --as {judge}` to store them again",
            }
            continue
        rows = [{str(k): v for k, v in row.items()} for row in table.to_dict(orient="records")]
        found["graphs"][judge] = _graph(meta, testimonies, statements, judge, rows)
    return found


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _one_conversation(
    conversation: dict[str, Any], events: list[dict[str, Any]], judge: str
) -> RunTables:
    """The conversation with the labels of one citation judge as the paradigm's tables, so its
    own `citation_table` reads it.

    A conversation that is not done is passed as done: the viewer shows what it stored so
    far, and says that the conversation is unfinished."""
    cid = str(conversation["conversation_id"])
    event_rows, label_rows = [], []
    for e in events:
        row = dict.fromkeys(EVENT_COLUMNS)
        row.update({k: e.get(k) for k in EVENT_COLUMNS if k in e})
        row.update(
            run_id="",
            conversation_id=cid,
            value=_json_text(e.get("value")),
            meta=json.dumps(e.get("meta") or {}),
        )
        event_rows.append(row)
        for label in e.get("labels") or []:
            if label.get("judge") != judge:
                continue
            label_rows.append(
                {
                    **dict.fromkeys(LABEL_COLUMNS),
                    **{k: label.get(k) for k in LABEL_COLUMNS if k in label},
                    "run_id": "",
                    "conversation_id": cid,
                    "event_seq": e["seq"],
                }
            )
    row = dict.fromkeys(CONVERSATION_BASE_COLUMNS)
    row.update(
        run_id="",
        conversation_id=cid,
        paradigm="testimony",
        status="done",
        meta=json.dumps(conversation.get("meta") or {}),
    )
    return RunTables(
        pd.DataFrame(event_rows, columns=EVENT_COLUMNS),
        pd.DataFrame(label_rows, columns=LABEL_COLUMNS),
        pd.DataFrame([row], columns=CONVERSATION_BASE_COLUMNS),
    )


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


def _judge_label(event: dict[str, Any], judge: str) -> dict[str, Any] | None:
    for label in event.get("labels") or []:
        if label["judge"] == judge:
            return dict(label)
    return None


def _graph(
    meta: dict[str, Any],
    testimonies: list[dict[str, Any]],
    statements: list[dict[str, Any]],
    judge: str,
    rows: list[dict[str, Any]],
) -> dict[str, Any]:
    order = {str(a["name"]): i for i, a in enumerate(meta.get("agents") or [])}

    def place(e: dict[str, Any]) -> tuple[int, int, str, int]:
        return (int(e["round"]), order.get(e["agent"], len(order)), str(e["agent"]), int(e["seq"]))

    graph = nx.DiGraph()
    layers: dict[int, list[str]] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for e in sorted(testimonies, key=place):
        nid = f"e{e['seq']}"
        root = root_of(e, meta)
        nodes[nid] = {
            "id": nid,
            "seq": int(e["seq"]),
            "kind": "testimony",
            "agent": e["agent"],
            "role": e["role"],
            "phase": TESTIMONY_LAYER,
            "root": root,
            "supports": (e.get("meta") or {}).get("supports"),
            "channel": e["channel"],
        }
        graph.add_node(nid)
        layers.setdefault(0, []).append(nid)
    numbers = sorted({int(e["round"]) for e in statements})
    for e in sorted(statements, key=place):
        nid = f"e{e['seq']}"
        label = _judge_label(e, judge)
        nodes[nid] = {
            "id": nid,
            "seq": int(e["seq"]),
            "kind": "statement",
            "agent": e["agent"],
            "role": e["role"],
            "phase": label_of(int(e["round"])),
            "extraction": "not_labelled" if label is None else str(label["status"]),
            "claims": 0,
            "unresolved": 0,
            "channel": e["channel"],
        }
        graph.add_node(nid)
        layers.setdefault(1 + numbers.index(int(e["round"])), []).append(nid)
    edges, unresolved = _edges(rows, nodes, graph)
    _mark_carried(nodes, graph)
    width, height = _layout(graph, layers, nodes)
    return {
        "judge": judge,
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
        "node_width": NODE_WIDTH,
        "node_height": NODE_HEIGHT,
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
