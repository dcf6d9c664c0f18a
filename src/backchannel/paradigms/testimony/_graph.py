"""The citation graph of a run: statements, their stored claims, and the `citations` table.

Claims are stored as labels of statement events under a judge whose name starts with
`citations` (`citations` for the markup, e.g. `citations_llm` for the LLM extractor), so
several extractions of one run coexist and can be compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, decode_json
from backchannel.paradigms.testimony._citations import Extraction
from backchannel.paradigms.testimony._phases import label_of

CITATION_JUDGE = "citations"
CITATION_COLUMNS = [
    "run_id",
    "conversation_id",
    "judge",
    "event_seq",
    "agent",
    "role",
    "round",
    "phase",
    "claim",
    "status",
    "source_kind",
    "source_agent",
    "source_round",
    "source_seq",
    "supports",
    "text",
]


@dataclass(slots=True)
class Statement:
    """One public statement and what the judge extracted from it (None: no extraction)."""

    seq: int
    agent: str
    role: str
    phase: str
    number: int
    extraction: Extraction | None
    status: str  # ok, or why there are no claims: parse_failure, not_labelled, ...
    text: str = ""  # the label's text (a failed extraction's raw answer)
    said: str = ""  # the statement itself


@dataclass(slots=True)
class Record:
    """One finished testimony conversation as the lineage measures need it."""

    run_id: str
    conversation_id: str
    meta: dict[str, Any]
    testimony: dict[str, int]  # sender -> event seq of its message
    statements: list[Statement]
    votes: dict[tuple[str, int], Any] = field(default_factory=dict)

    def statement(self, agent: str, phase: str) -> Statement | None:
        for s in self.statements:
            if s.agent == agent and s.phase == phase:
                return s
        return None


def _decode(text: Any) -> Any:
    if isinstance(text, dict):
        return text
    if text is None or text == "" or (isinstance(text, float) and pd.isna(text)):
        return None
    return json.loads(text)


def citation_judges(tables: RunTables) -> list[str]:
    """The judges whose labels hold citation claims, the markup one first."""
    names = {str(j) for j in tables.labels["judge"].unique() if str(j).startswith(CITATION_JUDGE)}
    return sorted(names, key=lambda n: (n != CITATION_JUDGE, n))


def records(tables: RunTables, judge: str) -> list[Record]:
    """Every finished testimony conversation with its statements under `judge`'s claims."""
    events = tables.events
    labels = tables.labels_for(judge)
    by_event = {
        (str(r["conversation_id"]), int(r["event_seq"])): r for r in labels.to_dict("records")
    }
    values = tables.events["value"].map(decode_json)
    found = []
    groups = dict(tuple(events.assign(vote=values).groupby("conversation_id", sort=False)))
    for row in tables.conversations.to_dict(orient="records"):
        meta = _decode(row.get("meta")) or {}
        if row.get("status") != "done" or "endpoint" not in meta:
            continue
        cid = str(row["conversation_id"])
        mine = groups.get(cid)
        record = Record(str(row.get("run_id", "")), cid, meta, {}, [])
        if mine is not None:
            _fill(record, mine, by_event)
        found.append(record)
    return found


def _fill(record: Record, events: pd.DataFrame, labels: dict[tuple[str, int], Any]) -> None:
    for e in events.to_dict(orient="records"):
        kind, name, seq = e["kind"], e["name"], int(e["seq"])
        if kind == "message" and name == "testimony":
            record.testimony[str(e["agent"])] = seq
        elif kind == "message" and name == "statement":
            number = int(e["round"])
            label = labels.get((record.conversation_id, seq))
            extraction, status, text = None, "not_labelled", ""
            if label is not None:
                status, text = str(label["status"]), str(label.get("text") or "")
                if status == "ok" and isinstance(label["label"], str):
                    extraction = Extraction.from_label(label["label"])
            record.statements.append(
                Statement(
                    seq,
                    str(e["agent"]),
                    str(e["role"]),
                    label_of(number),
                    number,
                    extraction,
                    status,
                    text,
                    str(e["text"] or ""),
                )
            )
        elif kind == "probe" and name == "vote":
            value = e["vote"] if e["status"] == "ok" else None
            record.votes[(str(e["agent"]), int(e["round"]))] = value
    record.statements.sort(key=lambda s: (s.number, s.seq))


def citation_table(tables: RunTables) -> pd.DataFrame:
    """One row per claim, per citation that did not count, and per statement whose extraction
    failed, for every citation judge: the edges statement -> cited testimony or statement."""
    rows: list[dict[str, Any]] = []
    for judge in citation_judges(tables):
        for record in records(tables, judge):
            for s in record.statements:
                rows.extend(_rows(record, judge, s))
    return pd.DataFrame(rows, columns=CITATION_COLUMNS)


def _rows(record: Record, judge: str, s: Statement) -> list[dict[str, Any]]:
    base = {
        "run_id": record.run_id,
        "conversation_id": record.conversation_id,
        "judge": judge,
        "event_seq": s.seq,
        "agent": s.agent,
        "role": s.role,
        "round": s.number,
        "phase": s.phase,
    }
    empty = dict.fromkeys(CITATION_COLUMNS[8:])
    if s.extraction is None:
        if s.status == "not_labelled":
            return []
        return [{**base, **empty, "status": s.status, "text": s.text}]
    rows = []
    for i, claim in enumerate(s.extraction.claims):
        if claim.kind == "testimony":
            target = record.testimony.get(claim.source)
        else:
            cited = record.statement(claim.source, claim.round or "")
            target = cited.seq if cited else None
        rows.append(
            {
                **base,
                **empty,
                "claim": i,
                "status": "ok",
                "source_kind": claim.kind,
                "source_agent": claim.source,
                "source_round": claim.round,
                "source_seq": target,
                "supports": claim.supports,
                "text": "",
            }
        )
    for bad in s.extraction.invalid:
        rows.append({**base, **empty, "status": bad.reason, "text": bad.text})
    return rows
