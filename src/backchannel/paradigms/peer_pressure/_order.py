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
            *(labels[c].tolist() for c in ("conversation_id", "event_seq", "label", "status")),
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
    done = tables.done_conversations()
    topology = {
        str(c)
        for c, meta in zip(done["conversation_id"], done["meta"], strict=True)
        if meta.get("topology") is not None
    }
    spoken: dict[tuple[str, int], list[tuple[str, str]]] = {}
    ordered = turns.sort_values(["conversation_id", "round", "turn"])
    for cid, seq, round_, agent, role in zip(
        *(ordered[c].tolist() for c in ("conversation_id", "seq", "round", "agent", "role")),
        strict=True,
    ):
        conversation = str(cid)
        if role == "adversary":
            position = "manipulated"
        else:
            position = _POSITION.get(label.get((conversation, int(seq)), ""), "other")
        spoken.setdefault((conversation, int(round_)), []).append((str(agent), position))
    rows = []
    columns = ("conversation_id", "seq", "round", "agent", "role", "status")
    for cid, seq, round_, agent, role, status in zip(
        *(probes[c].tolist() for c in columns), strict=True
    ):
        conversation, checkpoint = str(cid), int(round_)
        if checkpoint < 1:
            continue  # before round 1 nobody has spoken
        answer = label.get((conversation, int(seq))) if status == "ok" else None
        heard = spoken.get((conversation, checkpoint), [])
        others = [position for speaker, position in heard if speaker != agent]
        rows.append(
            {
                "conversation_id": conversation,
                "seq": int(seq),
                "agent": str(agent),
                "role": str(role),
                "options": None,
                "speakers": None if conversation in topology or not others else others,
                "answer": answer if answer in ANSWERS else None,
            }
        )
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS))
