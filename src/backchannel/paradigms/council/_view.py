"""What the transcript viewer shows of a council deliberation, from the paradigm's own
`deliberations`, `deliberation_table` and `score_table` on that conversation's tables: the
first-choice concentration (FCC), Borda winner and margin of its state (A or B, and C for a B
deliberation re-tallied by verification), and its evaluators' verification scores; the page
shows the debate, each evaluator's ranking and rationale, and the verifier's score for it.
"""

from __future__ import annotations

import math
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
    Row,
    Table,
    TableRow,
    Text,
    Timeline,
    View,
    ViewOptions,
    records,
)
from backchannel.paradigms.council._extract import deliberations
from backchannel.paradigms.council._metrics import TIE, deliberation_table, score_table

COLUMNS = (
    Column("fcc", "FCC", "first-choice concentration of the rankings (0 even, 1 all agree)"),
    Column("winner", "winner", "Borda winner of the rankings (tie when several share it)"),
    Column("margin", "margin", "Borda points of the winner minus the runner-up", shown=False),
    Column("mean_score", "verification", "mean verification score of the evaluators"),
    Column("fcc_c", "FCC (C)", "FCC re-tallied with verification weights (state C)", shown=False),
    Column("state", "state", "A (one model), B (a pool)", shown=False),
)


def _finite(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def rows(tables: RunTables, options: ViewOptions) -> dict[str, Row]:
    """FCC, winner, margin and mean verification score of each deliberation."""
    items = deliberations(tables)
    table = deliberation_table(items)
    scores = score_table(items).dropna(subset=["score"])
    mean = scores.groupby("conversation_id")["score"].mean()
    found = {}
    for d in items:
        mine = table[table["conversation_id"] == d.conversation_id] if len(table) else table
        own = mine[mine["state"] == d.pool]
        weighted = mine[mine["state"] == "C"]
        first = own.iloc[0] if len(own) else pd.Series(dtype=object)
        values = {
            "fcc": _finite(first.get("fcc")),
            "winner": _finite(first.get("winner")),
            "margin": _finite(first.get("margin")),
            "mean_score": _finite(mean.get(d.conversation_id)),
            "fcc_c": _finite(weighted.iloc[0]["fcc"]) if len(weighted) else None,
            "state": d.pool,
        }
        note = None if d.ballots else "no valid ranking: no tally"
        badges = (Chip("tie", "warning", "winner"),) if values["winner"] == TIE else ()
        found[d.conversation_id] = Row(values, badges=badges, note=note)
    return found


def page(tables: RunTables, conversation_id: str, options: ViewOptions) -> Page:
    """The debate by round, then the rankings with their rationale and verification score."""
    events = tables.events_of(done=False)
    found = records(events[events["conversation_id"] == conversation_id])
    debate: dict[tuple[int, str], list[int]] = {}
    rankings, rest = [], []
    scores: dict[tuple[str, int], dict[str, Any]] = {}
    for e in found:
        if e["kind"] == "message":
            debate.setdefault((int(e["round"]), str(e["name"])), []).append(int(e["seq"]))
        elif e["kind"] == "ranking":
            rankings.append(e)
        elif e["kind"] == "score" and (e["meta"] or {}).get("evaluator"):
            scores[(str(e["meta"]["evaluator"]), int(e["round"]))] = e
        else:
            rest.append(int(e["seq"]))
    debate_rows = tuple(
        TableRow(
            (
                Cell((f"round {number} {name}",), header=True),
                *(Cell((EventRef(seq),)) for seq in seqs),
            )
        )
        for (number, name), seqs in debate.items()
    )
    ranking_rows = []
    for e in rankings:
        value = e["value"] if e["status"] == "ok" and isinstance(e["value"], dict) else {}
        found_ranking = value.get("ranking")
        ranking: list[Any] = found_ranking if isinstance(found_ranking, list) else []
        listed = "\n".join(f"{i}. {option}" for i, option in enumerate(ranking, start=1))
        rationale = value.get("rationale")
        score = scores.get((str(e["agent"]), int(e["round"])))
        who: list[Any] = [str(e["agent"])]
        if (e["meta"] or {}).get("value"):
            who.append(Chip(str(e["meta"]["value"]), "", "role"))
        failed = () if e["status"] == "ok" else (Chip(str(e["status"]), "warning", "status"),)
        score_part: tuple[Any, ...] = ("–",)
        if score is not None:
            shown = (
                Text(f"{float(score['value']):.3f}")
                if score["status"] == "ok" and isinstance(score["value"], int | float)
                else Chip(str(score["status"]), "warning", "status")
            )
            score_part = (EventRef(int(score["seq"]), (shown,), body=False),)
        ranking_rows.append(
            TableRow(
                (
                    Cell(tuple(who), header=True),
                    Cell((str(e["name"]), f" (round {e['round']})")),
                    Cell((EventRef(int(e["seq"]), (*failed, Text(listed)), body=not listed),)),
                    Cell((Text(str(rationale)),) if rationale is not None else ()),
                    Cell(score_part),
                ),
                event=int(e["seq"]),
                data={"agent": str(e["agent"])},
            )
        )
    head = tuple(
        Cell((h,), header=True)
        for h in ("evaluator", "ranking round", "ranking", "rationale", "verification")
    )
    row = rows(tables, options).get(conversation_id) if len(rankings) else None
    summary = (
        ""
        if row is None
        else "FCC {} · Borda winner {} · mean verification {}".format(
            *(
                "–"
                if row.values.get(k) is None
                else f"{row.values[k]:.3f}"
                if isinstance(row.values[k], float)
                else str(row.values[k])
                for k in ("fcc", "winner", "mean_score")
            )
        )
    )
    panels: list[Panel] = [
        Table("Debate", (), debate_rows, name="council-debate"),
        Table(
            "Rankings and verification",
            head,
            tuple(ranking_rows),
            note=summary,
            name="council-rankings",
        ),
    ]
    if rest:
        panels.append(Timeline("Other events", tuple(rest)))
    return Page(tuple(panels))


VIEW = View(columns=COLUMNS, rows=rows, page=page, reads=frozenset({"meta"}))
