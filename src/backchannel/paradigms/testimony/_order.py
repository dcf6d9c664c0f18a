"""Testimony's answers for the order checks: every private vote, against the containers in the
order the agents are shown them (a seeded order per story, the same in every arm). UNKNOWN is
no container: such a vote is left out of the first-option check. Statements are read for their
claims only with citation markup, so no speaker order is declared."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables, decode_json
from backchannel.paradigms.testimony._graph import converted

VOTE = "vote"


def order_answers(tables: RunTables) -> pd.DataFrame:
    """One row per vote (`ORDER_COLUMNS`), read from the event columns by position (no event
    meta, no other column taken; each distinct id, name and stored value converted once)."""
    done = tables.done_conversations()
    options = {
        str(cid): list(meta.get("options") or [])
        for cid, meta in zip(done["conversation_id"].tolist(), done["meta"].tolist(), strict=True)
    }
    events = tables.core_events
    chosen = (
        (events["kind"] == "probe") & (events["name"] == VOTE) & (events["channel"] == "private")
    )
    at = np.flatnonzero((chosen & tables.done_events()).to_numpy(dtype=bool))
    if not len(at):
        return pd.DataFrame([], columns=list(ORDER_COLUMNS))
    ids = converted(events["conversation_id"])[at].tolist()
    answers = converted(events["value"].iloc[at], _answer)
    answers[~(events["status"].iloc[at] == "ok").to_numpy(dtype=bool, na_value=False)] = None
    columns: dict[str, list[Any]] = {
        "conversation_id": ids,
        "seq": events["seq"].to_numpy(dtype=np.int64)[at].tolist(),
        "agent": converted(events["agent"])[at].tolist(),
        "role": converted(events["role"])[at].tolist(),
        "options": [options.get(c) or None for c in ids],
        "speakers": [None] * len(ids),
        "answer": answers.tolist(),
    }
    return pd.DataFrame(columns, columns=list(ORDER_COLUMNS))


def _answer(text: Any) -> str | None:
    """A stored vote as an answer: the decoded value as text, None when there is none."""
    value = decode_json(text)
    return None if value is None else str(value)
