"""The council's answers for the order checks: each evaluator's first choice in its first
ranking, against the options in the order its prompt lists them and the advocates' messages of
the debate in the order it reads them (each message's position: the option its advocate
argues). The scenario fixes the options' order and the advocates speak in that order, so first
option and first speaker coincide here, and a preference for the first-listed option cannot be
told from a preference for its content (docs/validity.md)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables

ADVOCATE = "advocate_"


def order_answers(tables: RunTables) -> pd.DataFrame:
    """One row per first ranking of an evaluator (`ORDER_COLUMNS`)."""
    options = {
        str(c["conversation_id"]): list(c["meta"].get("options") or [])
        for c in tables.done_conversations().to_dict(orient="records")
    }
    debate = tables.events_of(kind="message", channel="public", role="advocate")
    spoken: dict[str, list[str]] = {}
    for row in debate.sort_values(["conversation_id", "seq"]).to_dict(orient="records"):
        if row["status"] == "ok" or row["text"]:
            spoken.setdefault(str(row["conversation_id"]), []).append(
                str(row["agent"]).removeprefix(ADVOCATE)
            )
    rankings = tables.events_of(kind="ranking", name="ranking")
    rows = []
    for row in rankings.to_dict(orient="records"):
        conversation = str(row["conversation_id"])
        value: dict[str, Any] = {}
        if row["status"] == "ok" and isinstance(row["value"], dict):
            value = row["value"]
        ranking = value.get("ranking") or []
        rows.append(
            {
                "conversation_id": conversation,
                "seq": int(row["seq"]),
                "agent": str(row["agent"]),
                "role": str(row["role"]),
                "options": options.get(conversation) or None,
                "speakers": spoken.get(conversation) or None,
                "answer": str(ranking[0]) if ranking else None,
            }
        )
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS))
