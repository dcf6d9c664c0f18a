"""What the transcript viewer shows of a dyad conversation, from the paradigm's own `extract`
on that conversation's tables: both roles' aligned ratings before round 1 and after the last
round, their shifts and the gap change (`outcomes`), and the aligned ratings and interaction
states by checkpoint (`trajectories`) drawn as a plot beside two lanes of messages.
"""

from __future__ import annotations

import math
from typing import Any

from backchannel.analysis import RunTables
from backchannel.paradigms._view import (
    Cell,
    Chip,
    Column,
    EventRef,
    Page,
    Plot,
    Prose,
    Row,
    Series,
    Table,
    TableRow,
    Text,
    View,
    ViewOptions,
    records,
)
from backchannel.paradigms.dyad._extract import extract
from backchannel.paradigms.dyad._scale import ROLES, SCALE_MAX, SCALE_MIN

TAG_TONES: dict[str, Any] = {"ACCEPT": "positive", "REJECT": "negative", "IGNORE": "muted"}
COLUMNS = (
    Column("shift_discussant", "shift D", "Discussant's aligned rating, post minus pre"),
    Column("shift_opponent", "shift O", "Opponent's aligned rating, post minus pre"),
    Column("gap_change", "gap change", "|D - O| after the last round minus before round 1"),
    Column("pre_discussant", "pre D", "Discussant's aligned rating before round 1", shown=False),
    Column("post_discussant", "post D", "Discussant's aligned rating at the end", shown=False),
    Column("pre_opponent", "pre O", "Opponent's aligned rating before round 1", shown=False),
    Column("post_opponent", "post O", "Opponent's aligned rating at the end", shown=False),
    Column("converged", "converged", "the gap closed (all four ratings known)", shown=False),
)


def _value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value.item() if hasattr(value, "item") else value


def rows(tables: RunTables, options: ViewOptions) -> dict[str, Row]:
    """Aligned pre/post ratings, shifts, gap change and convergence of each conversation."""
    outcomes = extract(tables).outcomes
    found = {}
    for record in records(outcomes):
        values = {c.key: _value(record.get(c.key)) for c in COLUMNS}
        note = None if record["complete"] else "a rating before or after is missing: no shift"
        found[str(record["conversation_id"])] = Row(values, note=note)
    return found


def page(tables: RunTables, conversation_id: str, options: ViewOptions) -> Page:
    """The ratings and states plot, then the two lanes (messages with tags, private ratings)."""
    events = tables.events_of(done=False)
    events = events[events["conversation_id"] == conversation_id]
    panels: list[Any] = []
    done = set(tables.done_conversations()["conversation_id"])
    if conversation_id in done:
        trajectories = extract(tables).trajectories
        series = []
        for what, column, dashed in (("rating", "rating", False), ("state", "state", True)):
            for role in ROLES:
                mine = trajectories[trajectories["role"] == role].sort_values("checkpoint")
                points = tuple(
                    (int(c), None if math.isnan(v) else float(v))
                    for c, v in zip(mine["checkpoint"], mine[column], strict=True)
                )
                series.append(Series(f"{role.capitalize()} {what}", points, dashed=dashed))
        panels.append(
            Plot(
                "Ratings and interaction states",
                tuple(series),
                xlabel="round",
                ylabel="aligned rating",
                ymin=SCALE_MIN,
                ymax=SCALE_MAX,
                note="Ratings aligned on the first statement's axis (6 = strongest support); "
                "states follow the ACCEPT/REJECT/IGNORE tags.",
            )
        )
    else:
        panels.append(Prose("The conversation is not finished: no ratings to plot."))
    by_round: dict[int, dict[str, list[EventRef]]] = {}
    for e in records(events):
        lanes = by_round.setdefault(int(e["round"]), {role: [] for role in ROLES})
        if e["role"] not in lanes:
            continue
        ok = e["status"] == "ok"
        parts: list[Any] = [Text(str(e["name"]) if e["channel"] == "public" else "private rating")]
        if e["kind"] == "message" and e["name"] == "turn" and ok and isinstance(e["value"], str):
            parts.append(Chip(e["value"], TAG_TONES.get(e["value"], ""), "category"))
        if e["kind"] == "rating" and ok:
            parts.append(Chip(f"rating {e['value']}", "info", "belief"))
        if not ok:
            parts.append(Chip(str(e["status"]), "warning", "status"))
        argument = (e["meta"] or {}).get("argument") if e["kind"] == "message" else None
        if argument is not None:
            parts.append(Text(str(argument)))
        lanes[str(e["role"])].append(EventRef(int(e["seq"]), tuple(parts), body=argument is None))
    table_rows = [
        TableRow(
            (
                Cell((str(r),), header=True),
                *(Cell(tuple(lanes[role]), data={"role": role}) for role in ROLES),
            ),
            data={"round": str(r)},
        )
        for r, lanes in sorted(by_round.items())
    ]
    head = (Cell(("round",), header=True), Cell(("Discussant",), header=True),
            Cell(("Opponent",), header=True))  # fmt: skip
    panels.append(Table("Lanes", head, tuple(table_rows), name="dyad-lanes"))
    return Page(tuple(panels))


VIEW = View(columns=COLUMNS, rows=rows, page=page)
