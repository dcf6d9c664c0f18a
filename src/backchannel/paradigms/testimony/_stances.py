"""Testimony's stance pairs: what a statement backs against the private vote of its round.

The pressure is the decoy l(m-1): in C1 the end the key's false testimony claims; in C0 the
same place, the arm's paired reference (the study compares decoy votes across the two arms of a
story). An agent starts where its T0 vote puts the object, before any testimony. A statement
has moved when one of its claims (the run's citation extraction) supports the decoy; the vote
has moved when it is the decoy. Definitions: docs/paradigms/testimony.md, "Say versus believe".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import RunTables, decode_json
from backchannel.paradigms._stance_rows import (
    OFF_THE_RECORD,
    off_the_record,
    pairs_frame,
    skipped_row,
)
from backchannel.paradigms.testimony._graph import Record, citation_judges, converted, records
from backchannel.paradigms.testimony._votes import vote_kind

UNKNOWN = "UNKNOWN"
START = 0  # T0: every role's vote from its own window alone
UNLABELLED = "unlabelled turn: no citation extraction of the statement"
FAILED_EXTRACTION = "unlabelled turn: the statement's extraction failed"
NO_START = "missing starting vote (T0)"
UNREADABLE_START = "unreadable starting vote (T0)"
AT_DECOY = "starts at the decoy: its own window ends there"
NO_PROBE = "missing probe: no vote after the statement"
UNREADABLE = "unreadable vote"


Vote = tuple[int, Any, Any]
"""A private vote as the pairs read it: its seq, decoded value and status."""


def _votes(tables: RunTables) -> dict[tuple[str, str, int], Vote]:
    """Each finished conversation's votes by (conversation, agent, round); of two votes of one
    agent and round, the later (higher seq). Read from the event columns by position (no event
    meta, no other column taken), each distinct id, name and value converted once."""
    events = tables.core_events
    chosen = (events["kind"] == "probe") & (events["name"] == "vote") & tables.done_events()
    at = np.flatnonzero(chosen.to_numpy(dtype=bool))
    at = at[np.argsort(events["seq"].to_numpy(dtype=np.int64)[at], kind="stable")]
    keys = zip(
        converted(events["conversation_id"])[at].tolist(),
        converted(events["agent"])[at].tolist(),
        events["round"].to_numpy(dtype=np.int64)[at].tolist(),
        strict=True,
    )
    found = zip(
        events["seq"].to_numpy(dtype=np.int64)[at].tolist(),
        converted(events["value"].iloc[at], decode_json).tolist(),
        events["status"].iloc[at].tolist(),
        strict=True,
    )
    return dict(zip(keys, found, strict=True))  # a later key replaces an earlier one


def _probes(tables: RunTables) -> dict[tuple[str, int], Vote]:
    """The off-the-record probes by (conversation, seq of the turn they follow); the events'
    meta is read only when the run has such probes."""
    events = tables.core_events
    if not ((events["kind"] == "probe") & (events["name"] == OFF_THE_RECORD)).any():
        return {}
    found = off_the_record(tables.events_of(kind="probe", name=OFF_THE_RECORD))
    return {key: (int(e["seq"]), e["value"], e["status"]) for key, e in found.items()}


def _place(vote: Vote, endpoint: str, decoy: str) -> str | None:
    """The vote's place (a container or UNKNOWN), None when there is no readable vote."""
    _, value, status = vote
    kind = vote_kind(value, endpoint, decoy, str(status))
    if kind in ("truncated", "failed") or status != "ok":
        return None
    return str(value)


def _rows(
    record: Record,
    votes: dict[tuple[str, str, int], Vote],
    probes: dict[tuple[str, int], Vote],
) -> list[dict[str, Any]]:
    cid, meta = record.conversation_id, record.meta
    endpoint, decoy = str(meta["endpoint"]), str(meta["decoy"])
    rows = []
    # Each agent's start vote and its place, read once per agent rather than per statement.
    starts: dict[str, tuple[Vote | None, str | None]] = {}
    for s in record.statements:
        probe = probes.get((cid, s.seq)) or votes.get((cid, s.agent, s.number))
        base = {
            "conversation_id": cid,
            "agent": s.agent,
            "role": s.role,
            "round": s.number,
            "turn_seq": s.seq,
            "probe_seq": None if probe is None else probe[0],
        }
        if s.agent not in starts:
            start = votes.get((cid, s.agent, START))
            starts[s.agent] = (start, None if start is None else _place(start, endpoint, decoy))
        start, start_place = starts[s.agent]
        if s.extraction is None:
            reason = UNLABELLED if s.status == "not_labelled" else FAILED_EXTRACTION
            rows.append(skipped_row(base, reason))
        elif start is None:
            rows.append(skipped_row(base, NO_START))
        elif start_place is None:
            rows.append(skipped_row(base, UNREADABLE_START))
        elif start_place == decoy:
            rows.append(skipped_row(base, AT_DECOY))
        elif probe is None:
            rows.append(skipped_row(base, NO_PROBE))
        elif (place := _place(probe, endpoint, decoy)) is None:
            rows.append(skipped_row(base, UNREADABLE))
        else:
            backed = {c.supports for c in s.extraction.claims if c.supports is not None}
            rows.append(
                {
                    **base,
                    "public_moved": decoy in backed,
                    "private_moved": place == decoy,
                    # Same position: the statement backs the voted place, or backs no place
                    # when the vote names none.
                    "agree": not backed if place == UNKNOWN else place in backed,
                    "skipped": None,
                }
            )
    return rows


def stance_pairs(tables: RunTables) -> pd.DataFrame:
    """One row per statement of a finished conversation, under the run's first citation
    extraction (the markup's when there is one), paired with the vote of its round."""
    judges = citation_judges(tables)
    votes = _votes(tables)
    probes = _probes(tables)
    rows: list[dict[str, Any]] = []
    if judges:
        for record in records(tables, judges[0]):
            rows.extend(_rows(record, votes, probes))
    else:
        rows.extend(_unlabelled(tables, votes, probes))
    return pairs_frame(rows)


def _unlabelled(
    tables: RunTables,
    votes: dict[tuple[str, str, int], Vote],
    probes: dict[tuple[str, int], Vote],
) -> list[dict[str, Any]]:
    """Without any extraction every statement is an unlabelled turn."""
    events = tables.core_events
    chosen = events[(events["kind"] == "message") & (events["name"] == "statement")]
    chosen = chosen[tables.done_events()[chosen.index]]
    rows = []
    columns = ("conversation_id", "seq", "agent", "role", "round")
    for cid, seq, agent, role, number in zip(*(chosen[c].tolist() for c in columns), strict=True):
        cid, seq, agent, number = str(cid), int(seq), str(agent), int(number)
        probe = probes.get((cid, seq)) or votes.get((cid, agent, number))
        base = {
            "conversation_id": cid,
            "agent": agent,
            "role": str(role),
            "round": number,
            "turn_seq": seq,
            "probe_seq": None if probe is None else probe[0],
        }
        rows.append(skipped_row(base, UNLABELLED))
    return rows
