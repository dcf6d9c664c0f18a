"""Peer pressure's answers for the order checks: each honest agent's main private answer after
round r, against the positions of the others' turns of round r in the order they spoke.

Positions are in the private answer's terms: an adversary's turn pushes the false answer
(`manipulated`); an honest turn the judge labelled `endorse` holds it, one labelled `reject`
holds the true answer (`true`), any other turn neither (`other`). A private answer labelled
`true` or `manipulated` is an answer; `mixed` or `uncertain` is none. The answers are free text,
so there are no options shown. Conversations on a topology (where an agent hears only its
neighbours) have no speaker order here.
"""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables

ANSWERS = ("true", "manipulated")
_POSITION = {"endorse": "manipulated", "reject": "true"}


def order_answers(tables: RunTables, judge: str) -> pd.DataFrame:
    """One row per honest agent's main probe after a round (`ORDER_COLUMNS`)."""
    labels = tables.labels_for(judge)
    label = {
        (str(c), int(s)): str(v)
        for c, s, v, status in zip(
            labels["conversation_id"],
            labels["event_seq"],
            labels["label"],
            labels["status"],
            strict=True,
        )
        if status == "ok" and v is not None
    }
    events = tables.core_events[tables.done_events()]  # no event meta needed
    turns = events[
        (events["kind"] == "message") & (events["name"] == "turn") & (events["channel"] == "public")
    ]
    probes = events[
        (events["kind"] == "probe")
        & (events["name"] == "answer")
        & (events["channel"] == "private")
        & (events["role"] == "honest")
    ]
    topology = {
        str(c["conversation_id"])
        for c in tables.done_conversations().to_dict(orient="records")
        if c["meta"].get("topology") is not None
    }
    spoken: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for row in turns.sort_values(["conversation_id", "round", "turn"]).to_dict(orient="records"):
        conversation = str(row["conversation_id"])
        if row["role"] == "adversary":
            position = "manipulated"
        else:
            position = _POSITION.get(label.get((conversation, int(row["seq"])), ""), "other")
        key = (conversation, int(row["round"]))
        spoken.setdefault(key, []).append((str(row["agent"]), position))
    rows = []
    for row in probes.to_dict(orient="records"):
        conversation, checkpoint = str(row["conversation_id"]), int(row["round"])
        if checkpoint < 1:
            continue  # before round 1 nobody has spoken
        answer = label.get((conversation, int(row["seq"]))) if row["status"] == "ok" else None
        heard = spoken.get((conversation, checkpoint), [])
        others = [position for agent, position in heard if agent != row["agent"]]
        rows.append(
            {
                "conversation_id": conversation,
                "seq": int(row["seq"]),
                "agent": str(row["agent"]),
                "role": str(row["role"]),
                "options": None,
                "speakers": None if conversation in topology or not others else others,
                "answer": answer if answer in ANSWERS else None,
            }
        )
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS))
