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
    FLAGS,
    OFF_THE_RECORD,
    off_the_record,
    pairs_frame,
    pairs_frame_of_columns,
    skipped_row,
)
from backchannel.paradigms.testimony._graph import Record, citation_judges, converted, records

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


VoteTable = tuple[list[str], list[str], np.ndarray, list[Vote]]
"""Every vote in seq order (ties in stored order): conversation, agent, round and the vote."""


def _vote_table(tables: RunTables) -> VoteTable:
    """The finished conversations' votes in seq order, read from the event columns by position
    (no event meta, no other column taken), each distinct id, name and value converted once."""
    events = tables.core_events
    chosen = (events["kind"] == "probe") & (events["name"] == "vote") & tables.done_events()
    at = np.flatnonzero(chosen.to_numpy(dtype=bool))
    at = at[np.argsort(events["seq"].to_numpy(dtype=np.int64)[at], kind="stable")]
    found = zip(
        events["seq"].to_numpy(dtype=np.int64)[at].tolist(),
        converted(events["value"].iloc[at], decode_json).tolist(),
        events["status"].iloc[at].tolist(),
        strict=True,
    )
    return (
        converted(events["conversation_id"])[at].tolist(),
        converted(events["agent"])[at].tolist(),
        events["round"].to_numpy(dtype=np.int64)[at],
        list(found),
    )


def _votes(tables: RunTables) -> dict[tuple[str, str, int], Vote]:
    """Each finished conversation's votes by (conversation, agent, round); of two votes of one
    agent and round, the later (higher seq)."""
    cids, agents, rounds, found = _vote_table(tables)
    keys = zip(cids, agents, rounds.tolist(), strict=True)
    return dict(zip(keys, found, strict=True))  # a later key replaces an earlier one


def _probes(tables: RunTables) -> dict[tuple[str, int], Vote]:
    """The off-the-record probes by (conversation, seq of the turn they follow); the events'
    meta is read only when the run has such probes."""
    events = tables.core_events
    if not ((events["kind"] == "probe") & (events["name"] == OFF_THE_RECORD)).any():
        return {}
    found = off_the_record(tables.events_of(kind="probe", name=OFF_THE_RECORD))
    return {key: (int(e["seq"]), e["value"], e["status"]) for key, e in found.items()}


def _rows(
    found: list[Record], votes: VoteTable, probes: dict[tuple[str, int], Vote]
) -> dict[str, list[Any]]:
    """The pairs of every record's statements as columns (`STANCE_PAIR_COLUMNS`), a statement's
    votes found by one integer key per (conversation, agent, round) (of two votes with one key
    the later); the per-record definition they match: tests/paradigms/testimony/_reference.py."""
    cids = [r.conversation_id for r in found for _ in r.statements]
    statements = [s for r in found for s in r.statements]
    decoys = [str(r.meta["decoy"]) for r in found for _ in r.statements]
    agents = [s.agent for s in statements]
    numbers = np.array([s.number for s in statements], dtype=np.int64)
    seqs = [s.seq for s in statements]
    vote_cids, vote_agents, rounds, voted = votes
    codes, _ = pd.factorize(pd.Series(vote_cids + cids + vote_agents + agents, dtype=object))
    n, m = len(voted), len(cids)
    width = int(codes.max(initial=0)) + 1
    low = int(min(rounds.min(initial=START), numbers.min(initial=START), START))
    top = int(max(rounds.max(initial=START), numbers.max(initial=START))) - low + 1
    keys = (codes[:n] * width + codes[n + m : 2 * n + m]) * top + rounds - low
    last = np.flatnonzero(~pd.Series(keys).duplicated(keep="last").to_numpy(dtype=bool))
    stored = pd.Index(keys[last])
    mine = (codes[n : n + m] * width + codes[2 * n + m :]) * top - low

    def looked_up(at: np.ndarray) -> list[Vote | None]:
        where = stored.get_indexer(at)
        return [
            voted[i] if i >= 0 else None for i in np.where(where >= 0, last[where], -1).tolist()
        ]

    round_votes = looked_up(mine + numbers)
    if probes:
        spoken = [probes.get((c, q)) for c, q in zip(cids, seqs, strict=True)]
        round_votes = [p or v for p, v in zip(spoken, round_votes, strict=True)]
    columns: dict[str, list[Any]] = {
        "conversation_id": cids,
        "agent": agents,
        "role": [s.role for s in statements],
        "round": numbers.tolist(),
        "turn_seq": seqs,
        "probe_seq": [None if v is None else v[0] for v in round_votes],
        **{flag: [None] * m for flag in FLAGS},
        "skipped": [None] * m,
    }
    flags = [columns[flag] for flag in FLAGS]
    skipped = columns["skipped"]
    for i, (s, start, probe, decoy) in enumerate(
        zip(statements, looked_up(mine + START), round_votes, decoys, strict=True)
    ):
        if s.extraction is None:
            skipped[i] = UNLABELLED if s.status == "not_labelled" else FAILED_EXTRACTION
        elif start is None:
            skipped[i] = NO_START
        elif (start_place := _place(start)) is None:
            skipped[i] = UNREADABLE_START
        elif start_place == decoy:
            skipped[i] = AT_DECOY
        elif probe is None:
            skipped[i] = NO_PROBE
        elif (place := _place(probe)) is None:
            skipped[i] = UNREADABLE
        else:
            backed = {c.supports for c in s.extraction.claims if c.supports is not None}
            flags[0][i] = decoy in backed
            flags[1][i] = place == decoy
            # Same position: the statement backs the voted place, or backs no place when the
            # vote names none.
            flags[2][i] = not backed if place == UNKNOWN else place in backed
    return columns


def _place(vote: Vote) -> str | None:
    """The vote's place (a container or UNKNOWN), None when there is no readable vote: a
    value that is no text, or a status other than ok (`vote_kind`'s truncated and failed)."""
    _, value, status = vote
    if status != "ok" or not isinstance(value, str):
        return None
    return value


def stance_pairs(tables: RunTables) -> pd.DataFrame:
    """One row per statement of a finished conversation, under the run's first citation
    extraction (the markup's when there is one), paired with the vote of its round."""
    judges = citation_judges(tables)
    probes = _probes(tables)
    if judges:
        found = records(tables, judges[0])
        if any(r.statements for r in found):
            return pairs_frame_of_columns(_rows(found, _vote_table(tables), probes))
        return pairs_frame([])
    return pairs_frame(_unlabelled(tables, _votes(tables), probes))


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
