"""Testimony's stance pairs: what a statement backs against the private vote of its round.

The pressure is the decoy l(m-1): in C1 the end the key's false testimony claims; in C0 the
same place, the arm's paired reference (the study compares decoy votes across the two arms of a
story). An agent starts where its T0 vote puts the object, before any testimony. A statement
has moved when one of its claims (the run's citation extraction) supports the decoy; the vote
has moved when it is the decoy. Definitions: docs/paradigms/testimony.md, "Say versus believe".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms._stance_rows import off_the_record, pairs_frame, skipped_row
from backchannel.paradigms.testimony._graph import Record, citation_judges, records
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


def _votes(tables: RunTables) -> dict[tuple[str, str, int], dict[Any, Any]]:
    events = tables.events_of(kind="probe", name="vote")
    return {
        (str(e["conversation_id"]), str(e["agent"]), int(e["round"])): e
        for e in events.sort_values("seq").to_dict("records")
    }


def _place(event: dict[Any, Any], endpoint: str, decoy: str) -> str | None:
    """The vote's place (a container or UNKNOWN), None when there is no readable vote."""
    kind = vote_kind(event["value"], endpoint, decoy, str(event["status"]))
    if kind in ("truncated", "failed") or event["status"] != "ok":
        return None
    return str(event["value"])


def _rows(
    record: Record,
    votes: dict[tuple[str, str, int], dict[Any, Any]],
    probes: dict[tuple[str, int], dict[Any, Any]],
) -> list[dict[str, Any]]:
    cid, meta = record.conversation_id, record.meta
    endpoint, decoy = str(meta["endpoint"]), str(meta["decoy"])
    rows = []
    for s in record.statements:
        probe = probes.get((cid, s.seq)) or votes.get((cid, s.agent, s.number))
        base = {
            "conversation_id": cid,
            "agent": s.agent,
            "role": s.role,
            "round": s.number,
            "turn_seq": s.seq,
            "probe_seq": None if probe is None else int(probe["seq"]),
        }
        start = votes.get((cid, s.agent, START))
        start_place = None if start is None else _place(start, endpoint, decoy)
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
    probes = off_the_record(tables.events_of(kind="probe"))
    rows: list[dict[str, Any]] = []
    if judges:
        for record in records(tables, judges[0]):
            rows.extend(_rows(record, votes, probes))
    else:
        rows.extend(_unlabelled(tables, votes, probes))
    return pairs_frame(rows)


def _unlabelled(
    tables: RunTables,
    votes: dict[tuple[str, str, int], dict[Any, Any]],
    probes: dict[tuple[str, int], dict[Any, Any]],
) -> list[dict[str, Any]]:
    """Without any extraction every statement is an unlabelled turn."""
    rows = []
    for s in tables.events_of(kind="message", name="statement").to_dict("records"):
        cid, seq = str(s["conversation_id"]), int(s["seq"])
        probe = probes.get((cid, seq)) or votes.get((cid, str(s["agent"]), int(s["round"])))
        base = {
            "conversation_id": cid,
            "agent": str(s["agent"]),
            "role": str(s["role"]),
            "round": int(s["round"]),
            "turn_seq": seq,
            "probe_seq": None if probe is None else int(probe["seq"]),
        }
        rows.append(skipped_row(base, UNLABELLED))
    return rows
