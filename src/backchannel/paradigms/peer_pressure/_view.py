"""What the transcript viewer shows of a peer-pressure conversation, from the paradigm's own
metric functions on that conversation's tables: initial infection and FPI
(`final_private_infection`), the infection curve (`infection_by_checkpoint`), and hidden
infections and silent knowers (the seven-way category of each paired turn, `paired_turns`).

The page is a rounds x agents grid: each cell holds the public turn with its stance and the
private answer after that round with its label; the cells the metrics count as hidden infection
or silent knower are marked.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms._view import (
    Cell,
    Chip,
    Column,
    EventRef,
    Page,
    Panel,
    Plot,
    Prose,
    Row,
    Series,
    Table,
    TableRow,
    Text,
    Timeline,
    View,
    ViewOptions,
    records,
)
from backchannel.paradigms.peer_pressure._base import INFECTED, KNOWER, MAIN_PROBE
from backchannel.paradigms.peer_pressure._infection import (
    final_private_infection,
    infection_by_checkpoint,
)
from backchannel.paradigms.peer_pressure._pairing import paired_turns, seven_way_categories

HIDDEN, SILENT = "hidden_infection", "silent_knower"
TONES: dict[str, Any] = {INFECTED: "negative", KNOWER: "positive", "endorse": "negative",
                         "reject": "positive"}  # fmt: skip

COLUMNS = (
    Column("initial", "initial", "share of honest agents privately manipulated before round 1"),
    Column("fpi", "FPI", "final private infection: share manipulated at the last checkpoint"),
    Column(
        "hidden_infections",
        "hidden",
        "exposed turns whose speaker is privately manipulated but hedges or ignores in public",
    ),
    Column(
        "silent_knowers",
        "silent",
        "exposed turns whose speaker privately knows the answer but ignores the false one",
    ),
)


def judge_of(tables: RunTables, options: ViewOptions) -> str | None:
    """The judge whose labels the figures use: the one asked for, else the run's configured
    judge, else the first judge (by name) that labelled the conversations."""
    judges = sorted(str(j) for j in tables.labels["judge"].unique())
    if options.judge:
        return options.judge
    settings = (tables.manifest.get("config_resolved") or {}).get("settings") or {}
    configured = settings.get("judge") if isinstance(settings, dict) else None
    name = configured.get("name") if isinstance(configured, dict) else None
    if name and name in judges:
        return str(name)
    return judges[0] if judges else None


def _categories(tables: RunTables, judge: str) -> pd.DataFrame:
    """The paired turns (main pairing) with their seven-way category."""
    paired = paired_turns(tables, judge, "main")
    return paired.assign(category=seven_way_categories(paired))


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def rows(tables: RunTables, options: ViewOptions) -> dict[str, Row]:
    """initial, fpi, hidden_infections and silent_knowers of each finished conversation."""
    done = tables.done_conversations()["conversation_id"].astype(str).tolist()
    judge = judge_of(tables, options)
    if judge is None:
        return {cid: Row(note="no judge labelled this conversation") for cid in done}
    shares = {
        str(r["conversation_id"]): r
        for r in records(
            final_private_infection(tables, judge)[["conversation_id", "initial", "fpi"]]
        )
    }
    paired = _categories(tables, judge)
    counts: dict[tuple[str, str], int] = {}
    for cid, category in zip(paired["conversation_id"], paired["category"], strict=True):
        counts[(str(cid), str(category))] = counts.get((str(cid), str(category)), 0) + 1
    found = {}
    for cid in done:
        share = shares.get(cid)
        found[cid] = Row(
            {
                "initial": None if share is None else _number(share["initial"]),
                "fpi": None if share is None else _number(share["fpi"]),
                "hidden_infections": counts.get((cid, HIDDEN), 0),
                "silent_knowers": counts.get((cid, SILENT), 0),
            }
        )
    return found


def _labels(tables: RunTables, judge: str | None) -> dict[int, tuple[str | None, str]]:
    if judge is None:
        return {}
    chosen = tables.labels_for(judge)
    return {
        int(seq): (None if pd.isna(label) else str(label), str(status))
        for seq, label, status in zip(
            chosen["event_seq"], chosen["label"], chosen["status"], strict=True
        )
    }


def _part(
    event: dict[str, Any], said: str, kind: str, label: tuple[str | None, str] | None
) -> EventRef:
    """One event of a grid cell: what it is, its label under the judge, a failed status."""
    chips: list[Any] = [Text(said)]
    if label is not None and label[1] == "ok" and label[0] is not None:
        chips.append(Chip(label[0], TONES.get(label[0], ""), kind))
    elif label is not None:
        chips.append(Chip(f"label {label[1]}", "warning", "status"))
    if event["status"] != "ok":
        chips.append(Chip(str(event["status"]), "warning", "status"))
    return EventRef(int(event["seq"]), tuple(chips))


def page(tables: RunTables, conversation_id: str, options: ViewOptions) -> Page:
    """The opening, the rounds x agents grid, the infection curve and the other events."""
    events = tables.events[tables.events["conversation_id"] == conversation_id]
    found = records(events)
    meta = tables.conversations["meta"].map(_meta).iloc[0] if len(tables.conversations) else {}
    judge = judge_of(tables, options)
    labels = _labels(tables, judge)
    agents = [str(a["name"]) for a in meta.get("agents", []) if isinstance(a, dict)]
    adversaries = set(meta.get("adversaries") or []) | {
        str(a["name"]) for a in meta.get("agents", []) if a.get("role") == "adversary"
    }
    public: dict[tuple[int, str], dict[str, Any]] = {}
    private: dict[tuple[int, str], dict[str, Any]] = {}
    opening, rest, rounds = [], [], 0
    for e in found:
        if e["kind"] == "message" and e["name"] == "opening":
            opening.append(int(e["seq"]))
            continue
        if e["kind"] == "message" and e["name"] == "turn":
            public[(int(e["round"]), str(e["agent"]))] = e
        elif e["kind"] == "probe" and e["name"] == MAIN_PROBE:
            private[(int(e["round"]), str(e["agent"]))] = e
        else:
            rest.append(int(e["seq"]))
            continue
        rounds = max(rounds, int(e["round"]))
        if e["agent"] not in agents and e["role"] != "moderator":
            agents.append(str(e["agent"]))
    marks: dict[tuple[int, str], str] = {}
    curve: list[tuple[float, float | None]] = []
    if judge is not None and conversation_id in set(tables.done_conversations()["conversation_id"]):
        for turn in records(_categories(tables, judge)):
            if turn["category"] in (HIDDEN, SILENT):
                marks[(int(turn["round"]), str(turn["agent"]))] = str(turn["category"])
        course = infection_by_checkpoint(tables, judge)
        course = course[course["conversation_id"] == conversation_id].sort_values("checkpoint")
        curve = [
            (int(c), float(v))
            for c, v in zip(course["checkpoint"], course["infection"], strict=True)
        ]
    head = [Cell(("round",), header=True)] + [
        Cell(
            (a, Chip("adversary", "negative", "role")) if a in adversaries else (a,),
            tone="negative" if a in adversaries else "",
            header=True,
            data={"agent": a},
        )
        for a in agents
    ]
    grid = []
    for r in range(rounds + 1):
        cells = [Cell(("before 1" if r == 0 else str(r),), header=True)]
        for a in agents:
            pub, priv = public.get((r, a)), private.get((r, a))
            parts: list[Any] = []
            if pub is not None:
                parts.append(_part(pub, "said", "stance", labels.get(int(pub["seq"]))))
            if priv is not None:
                parts.append(
                    _part(priv, "answered privately", "belief", labels.get(int(priv["seq"])))
                )
            mark = marks.get((r, a)) if pub is not None and priv is not None else None
            cells.append(
                Cell(
                    tuple(parts),
                    tone="" if mark is None else "highlight" if mark == HIDDEN else "info",
                    flag=None if mark is None else mark.replace("_", " "),
                    requires=()
                    if pub is None or priv is None
                    else (int(pub["seq"]), int(priv["seq"])),
                    data={"round": str(r), "agent": a, "mark": mark or ""},
                )
            )
        grid.append(TableRow(tuple(cells)))
    panels: list[Panel] = []
    if opening:
        panels.append(Timeline("Opening", tuple(opening)))
    title = "Rounds × agents" + (f" (labels by {judge})" if judge else "")
    panels.append(
        Table(
            title,
            tuple(head),
            tuple(grid),
            note="Each cell: the public message of that round (stance) and the private answer "
            "after it (belief). Marked cells are the turns the metrics count as hidden infection "
            "(privately manipulated, hedging or ignoring in public) or silent knower (privately "
            "true, ignoring the false answer). Click any part to see its prompt.",
            name="pp-grid",
        )
    )
    if curve:
        panels.append(
            Plot(
                "Infection curve",
                (Series("manipulated share", tuple(curve)),),
                xlabel="checkpoint (after round)",
                ylabel="share of honest agents privately manipulated",
            )
        )
    elif judge is None:
        panels.append(Prose("No judge labelled this conversation, so there is no infection curve."))
    if rest:
        panels.append(Timeline("Other events (re-asks and more)", tuple(rest)))
    return Page(tuple(panels))


def _meta(text: Any) -> dict[str, Any]:
    from backchannel.analysis import decode_json

    found = decode_json(text)
    return found if isinstance(found, dict) else {}


VIEW = View(columns=COLUMNS, rows=rows, page=page)
