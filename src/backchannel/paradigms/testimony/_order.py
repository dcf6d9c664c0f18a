"""Testimony's answers for the order checks: every private vote, against the containers in the
order the agents are shown them (a seeded order per story, the same in every arm). UNKNOWN is
no container: such a vote is left out of the first-option check. Statements are read for their
claims only with citation markup, so no speaker order is declared."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables, decode_json

VOTE = "vote"


def order_answers(tables: RunTables) -> pd.DataFrame:
    """One row per vote (`ORDER_COLUMNS`), read from the event columns (no event meta; each
    distinct stored value decoded once)."""
    done = tables.done_conversations()
    options = {
        str(cid): list(meta.get("options") or [])
        for cid, meta in zip(done["conversation_id"].tolist(), done["meta"].tolist(), strict=True)
    }
    events = tables.core_events
    chosen = (
        (events["kind"] == "probe") & (events["name"] == VOTE) & (events["channel"] == "private")
    )
    votes = events[chosen & tables.done_events()]
    if votes.empty:
        return pd.DataFrame([], columns=list(ORDER_COLUMNS))
    decoded: dict[Any, Any] = {}
    for text in votes["value"].unique().tolist():
        decoded[text] = decode_json(text)
    ids = [str(c) for c in votes["conversation_id"].tolist()]
    answers = [
        None if status != "ok" or (value := decoded[text]) is None else str(value)
        for status, text in zip(votes["status"].tolist(), votes["value"].tolist(), strict=True)
    ]
    columns: dict[str, list[Any]] = {
        "conversation_id": ids,
        "seq": [int(s) for s in votes["seq"].tolist()],
        "agent": [str(a) for a in votes["agent"].tolist()],
        "role": [str(r) for r in votes["role"].tolist()],
        "options": [options.get(c) or None for c in ids],
        "speakers": [None] * len(ids),
        "answer": answers,
    }
    return pd.DataFrame(columns, columns=list(ORDER_COLUMNS))
