"""Testimony's answers for the order checks: every private vote, against the containers in the
order the agents are shown them (a seeded order per story, the same in every arm). UNKNOWN is
no container: such a vote is left out of the first-option check. Statements are read for their
claims only with citation markup, so no speaker order is declared."""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables

VOTE = "vote"


def order_answers(tables: RunTables) -> pd.DataFrame:
    """One row per vote (`ORDER_COLUMNS`)."""
    options = {
        str(c["conversation_id"]): list(c["meta"].get("options") or [])
        for c in tables.done_conversations().to_dict(orient="records")
    }
    votes = tables.events_of(kind="probe", name=VOTE, channel="private")
    rows = [
        {
            "conversation_id": str(row["conversation_id"]),
            "seq": int(row["seq"]),
            "agent": str(row["agent"]),
            "role": str(row["role"]),
            "options": options.get(str(row["conversation_id"])) or None,
            "speakers": None,
            "answer": None if row["status"] != "ok" or row["value"] is None else str(row["value"]),
        }
        for row in votes.to_dict(orient="records")
    ]
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS))
