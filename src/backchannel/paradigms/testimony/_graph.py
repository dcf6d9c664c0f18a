"""The citation graph of a run: statements, their stored claims, and the `citations` table.

Claims are stored as labels of statement events under a judge whose name starts with
`citations` (`citations` for the markup, e.g. `citations_llm` for the LLM extractor), so
several extractions of one run coexist and can be compared.
"""

from __future__ import annotations

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


def citation_judges(tables: RunTables) -> list[str]:
    """The judges whose labels hold citation claims, the markup one first."""
    names = {str(j) for j in tables.labels["judge"].unique() if str(j).startswith(CITATION_JUDGE)}
    return sorted(names, key=lambda n: (n != CITATION_JUDGE, n))


def records(tables: RunTables, judge: str) -> list[Record]:
    """Every finished testimony conversation with its statements under `judge`'s claims
    (built once per judge inside `tables.reuse()`: the lineage and the stance pairs share it)."""
    return tables.memo(("testimony_records", judge), lambda: _records(tables, judge))


READ = (("message", "testimony"), ("message", "statement"), ("probe", "vote"))
"""The events a record holds: testimonies, statements and votes."""


def _records(tables: RunTables, judge: str) -> list[Record]:
    """One pass over the columns of the events a record holds (no event meta, no row dicts):
    the conversations are read in stored order, each event goes to its own record."""
    done = tables.done_conversations()
    found: list[Record] = []
    by_id: dict[str, list[Record]] = {}
    run_ids = done["run_id"].tolist() if "run_id" in done.columns else [""] * len(done)
    for run_id, cid, meta in zip(
        run_ids, done["conversation_id"].tolist(), done["meta"].tolist(), strict=True
    ):
        if "endpoint" not in meta:
            continue
        record = Record(str(run_id), str(cid), meta, {}, [])
        found.append(record)
        by_id.setdefault(record.conversation_id, []).append(record)
    events = tables.core_events
    kind, name = events["kind"], events["name"]
    mask = pd.Series(False, index=events.index)
    for k, n in READ:
        mask |= (kind == k) & (name == n)
    chosen = events[mask & tables.done_events()]
    labels = _labels(tables.labels_for(judge))
    extractions: dict[str, Extraction] = {}  # one parse per distinct label text
    decoded: dict[Any, Any] = {}  # one decoding per distinct vote value
    columns = ("conversation_id", "kind", "name", "seq", "agent", "role", "round", "text")
    for cid, k, n, seq, agent, role, number, said, value, status in zip(
        *(chosen[c].tolist() for c in columns),
        chosen["value"].tolist(),
        chosen["status"].tolist(),
        strict=True,
    ):
        for record in by_id.get(str(cid), ()):
            seq = int(seq)
            if n == "testimony":
                record.testimony[str(agent)] = seq
            elif k == "message":
                _statement(record, seq, agent, role, int(number), said, labels, extractions)
            else:
                if status == "ok" and value not in decoded:
                    decoded[value] = decode_json(value)
                record.votes[(str(agent), int(number))] = decoded[value] if status == "ok" else None
    for record in found:
        record.statements.sort(key=lambda s: (s.number, s.seq))
    return found


def _labels(labels: pd.DataFrame) -> dict[tuple[str, int], tuple[Any, Any, Any]]:
    """(status, label, text) of each labelled event, by conversation and event seq."""
    columns = ("conversation_id", "event_seq", "status", "label", "text")
    return {
        (str(cid), int(seq)): (status, label, text)
        for cid, seq, status, label, text in zip(
            *(labels[c].tolist() for c in columns), strict=True
        )
    }


def _statement(
    record: Record,
    seq: int,
    agent: Any,
    role: Any,
    number: int,
    said: Any,
    labels: dict[tuple[str, int], tuple[Any, Any, Any]],
    extractions: dict[str, Extraction],
) -> None:
    label = labels.get((record.conversation_id, seq))
    extraction, status, text = None, "not_labelled", ""
    if label is not None:
        status, text = str(label[0]), str(label[2] or "")
        if status == "ok" and isinstance(label[1], str):
            extraction = extractions.get(label[1])
            if extraction is None:
                extraction = extractions[label[1]] = Extraction.from_label(label[1])
    record.statements.append(
        Statement(
            seq,
            str(agent),
            str(role),
            label_of(number),
            number,
            extraction,
            status,
            text,
            str(said or ""),
        )
    )


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
