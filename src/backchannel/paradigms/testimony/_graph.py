"""The citation graph of a run: statements, their stored claims, and the `citations` table.

Claims are stored as labels of statement events under a judge whose name starts with
`citations` (`citations` for the markup, e.g. `citations_llm` for the LLM extractor), so
several extractions of one run coexist and can be compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backchannel._collector import collector_paused
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

    def build() -> list[Record]:
        with collector_paused():
            return _records(tables, judge)

    return tables.memo(("testimony_records", judge), build)


READ = (("message", "testimony"), ("message", "statement"), ("probe", "vote"))
"""The events a record holds: testimonies, statements and votes."""


def _records(tables: RunTables, judge: str) -> list[Record]:
    """The records built a column at a time (no per-event loop): each event is matched to its
    records by integer codes, each statement to its label by an integer key, each distinct
    text, label and vote value converted once; a record's statements in (round, seq) order,
    ties in stored order, and of two votes or testimonies with one key the later one."""
    done = tables.done_conversations()
    run_ids = done["run_id"].tolist() if "run_id" in done.columns else [""] * len(done)
    found = [
        Record(str(run_id), str(cid), meta, {}, [])
        for run_id, cid, meta in zip(
            run_ids, done["conversation_id"].tolist(), done["meta"].tolist(), strict=True
        )
        if "endpoint" in meta
    ]
    events = tables.core_events
    kind, name = events["kind"], events["name"]
    mask = pd.Series(False, index=events.index)
    for k, n in READ:
        mask |= (kind == k) & (name == n)
    # Positions of the events read, so only the columns used are taken (never the texts of
    # the votes, nor the reasoning).
    chosen = np.flatnonzero((mask & tables.done_events()).to_numpy(dtype=bool))
    event, rec = _matches([r.conversation_id for r in found], events["conversation_id"], chosen)
    # Each pair (event, record) in record order, events in stored order within a record.
    by_record = np.argsort(rec, kind="stable")
    event, rec = chosen[event[by_record]], rec[by_record]
    testimony = (name == "testimony").to_numpy(dtype=bool)[event]
    statement = ~testimony & (kind == "message").to_numpy(dtype=bool)[event]
    vote = ~testimony & ~statement
    agent = converted(events["agent"])[event]
    seq = events["seq"].to_numpy(dtype=np.int64)[event]
    number = events["round"].to_numpy(dtype=np.int64)[event]
    senders = list(zip(agent[testimony].tolist(), seq[testimony].tolist(), strict=True))
    for i, record in _spans(found, rec[testimony]):
        record.testimony = dict(senders[i])
    at = event[vote]
    values = _vote_values(events["value"].iloc[at], events["status"].iloc[at]).tolist()
    keys = zip(agent[vote].tolist(), number[vote].tolist(), strict=True)
    votes = list(zip(keys, values, strict=True))
    for i, record in _spans(found, rec[vote]):
        record.votes = dict(votes[i])
    mine = np.flatnonzero(statement)
    order = np.lexsort((seq[mine], number[mine], rec[mine]))  # stable: ties in stored order
    mine = mine[order]
    at = event[mine]
    labelled = _label_columns(
        tables.labels_for(judge), events["conversation_id"].iloc[at], seq[mine]
    )
    numbers, which = np.unique(number[mine], return_inverse=True)
    phases = _objects_of([label_of(int(n)) for n in numbers])[which]
    columns = (
        seq[mine].tolist(),
        agent[mine].tolist(),
        converted(events["role"].iloc[at]).tolist(),
        phases.tolist(),
        number[mine].tolist(),
        *labelled,
        [str(x or "") for x in events["text"].iloc[at].tolist()],
    )
    if len({len(c) for c in columns}) > 1:
        raise ValueError("statement columns of unequal lengths")
    statements = list(map(Statement, *columns))
    for i, record in _spans(found, rec[mine]):
        record.statements = statements[i]
    return found


def _objects_of(values: list[Any]) -> np.ndarray:
    """`values` as an object array, each kept as it is."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _matches(ids: list[str], cids: pd.Series, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i, record) of a chosen event `chosen[i]` (positions in `cids`) and a record
    of its conversation (`ids`: the records' conversation ids, possibly repeated across runs),
    by event then record."""
    codes = _codes(ids, cids.iloc[chosen])
    mine, theirs = codes[: len(ids)], codes[len(ids) :]
    order = np.argsort(mine, kind="stable")
    lo = np.searchsorted(mine[order], theirs, side="left")
    count = np.searchsorted(mine[order], theirs, side="right") - lo
    event = np.repeat(np.arange(len(theirs), dtype=np.int64), count)
    offset = np.arange(len(event), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    return event, order[np.repeat(lo, count) + offset].astype(np.int64)


def _spans(found: list[Record], rec: np.ndarray) -> list[tuple[slice, Record]]:
    """The slice of each record's rows in `rec` (sorted record indices), for the records
    that have any."""
    present, starts, counts = np.unique(rec, return_index=True, return_counts=True)
    return [
        (slice(lo, lo + n), found[r])
        for r, lo, n in zip(present.tolist(), starts.tolist(), counts.tolist(), strict=True)
    ]


def converted(column: pd.Series, convert: Callable[[Any], Any] = str) -> np.ndarray:
    """`convert` (by default `str`) of each value of a column as objects, each distinct
    value (missing ones too) converted once."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    converted = np.empty(len(uniques), dtype=object)
    for i, value in enumerate(uniques):  # one by one: a converted sequence stays one object
        converted[i] = convert(value)
    return converted[codes]


def _codes(*columns: Sequence[Any] | pd.Series) -> np.ndarray:
    """The values of all `columns`, one after another, as codes of one codebook (missing
    values get a code of their own)."""
    parts = [pd.Series(c).astype("str") for c in columns]
    codes, _ = pd.factorize(pd.concat(parts, ignore_index=True), use_na_sentinel=False)
    return codes.astype(np.int64)


def _vote_values(values: pd.Series, statuses: pd.Series) -> np.ndarray:
    """Each vote's decoded value (each distinct text decoded once), None unless its status is
    ok."""
    codes, texts = pd.factorize(values, use_na_sentinel=True)
    decoded = np.empty(len(texts) + 1, dtype=object)  # the last one: no value (code -1)
    for i, text in enumerate(texts):  # one by one: a decoded list stays one object
        decoded[i] = decode_json(text)
    found = decoded[codes]
    found[~(statuses == "ok").to_numpy(dtype=bool, na_value=False)] = None
    return found


def _label_columns(
    labels: pd.DataFrame, cids: pd.Series, seqs: np.ndarray
) -> tuple[list[Extraction | None], list[str], list[str]]:
    """Extraction, status and text of the events (`cids`, `seqs`) from their labels (of two
    labels of one event, the later): not_labelled and no text without one, an extraction only
    for an ok label (each distinct label parsed once)."""
    codes = _codes(cids, labels["conversation_id"])
    event_seq = labels["event_seq"].to_numpy(dtype=np.int64)
    top = int(max(seqs.max(initial=0), event_seq.max(initial=0))) + 1
    wanted = codes[: len(seqs)] * top + seqs
    stored = codes[len(seqs) :] * top + event_seq
    last = np.flatnonzero(~pd.Series(stored).duplicated(keep="last").to_numpy(dtype=bool))
    where = pd.Index(stored[last]).get_indexer(wanted)
    mine = labels[["status", "label", "text"]].iloc[last[where[where >= 0]]]
    status = converted(mine["status"])
    text = converted(mine["text"], lambda t: str(t or ""))
    # `str` of the status is what counts as ok; a label that is no text has no extraction.
    parsed = converted(mine["label"], _extraction)
    ok = np.fromiter(
        (st == "ok" and isinstance(e, Extraction) for st, e in zip(status, parsed, strict=True)),
        dtype=bool,
        count=len(parsed),
    )
    extraction = np.full(len(seqs), None, dtype=object)
    statuses = np.full(len(seqs), "not_labelled", dtype=object)
    texts = np.full(len(seqs), "", dtype=object)
    hit = np.flatnonzero(where >= 0)
    extraction[hit[ok]] = parsed[ok]
    statuses[hit], texts[hit] = status, text
    return extraction.tolist(), statuses.tolist(), texts.tolist()


def _extraction(label: Any) -> Extraction | None:
    """The extraction a label holds; None for a label that is no text."""
    return Extraction.from_label(label) if isinstance(label, str) else None


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
