"""Hand-built testimony runs with statements in citation markup, for the lineage tests.

Roles: K (key), S (second-key), A, B, C (members). Every role sends one testimony; S's supports
the true endpoint red_box, K's the decoy blue_box in C1 (red_box in C0). Statements are parsed
by the markup extractor exactly as a run stores them.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables
from backchannel.paradigms.testimony._citations import context_for, parse_markup
from backchannel.paradigms.testimony._phases import round_of

ROLES = {"K": "key", "S": "second_key", "A": "member", "B": "member", "C": "member"}
OBSERVERS = {"P": "observer", "Q": "observer", "R": "observer"}
CONTAINERS = ("red_box", "blue_box", "green_box")
VALUES = {"t": "red_box", "d": "blue_box", "u": "UNKNOWN", "o": "green_box"}


def _event(cid: str, seq: int, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(EVENT_COLUMNS)
    row.update(
        run_id="r",
        conversation_id=cid,
        seq=seq,
        status="ok",
        model="sim/a",
        prompt_tokens=0,
        completion_tokens=0,
        latency_s=0.0,
        cached=False,
        meta="{}",
    )
    row.update(fields)
    return row


def conversation(
    item: str,
    condition: str,
    statements: dict[tuple[str, str], str],
    votes: dict[tuple[str, str], str] | None = None,
    *,
    failed: set[tuple[str, str]] | None = None,
    intervention: str = "none",
) -> dict[str, Any]:
    """`statements`: (agent, phase) -> text; `votes`: (agent, phase) -> t/d/u/o/x;
    `failed`: statements whose extraction is stored as a parse failure."""
    return {
        "item": item,
        "condition": condition,
        "statements": statements,
        "votes": votes or {},
        "failed": failed or set(),
        "intervention": intervention,
    }


def tables(*specs: dict[str, Any], judge: str = "citations") -> RunTables:
    events: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    conversations: list[dict[str, Any]] = []
    for spec in specs:
        cid = f"condition={spec['condition']}/{spec['item']}/0"
        key_supports = "blue_box" if spec["condition"] == "C1" else "red_box"
        supports = {"K": key_supports, "S": "red_box", "A": None, "B": "green_box", "C": None}
        messages = [
            {
                "sender": n,
                "kind": "broadcast",
                "recipients": [],
                "text": f"{n}'s account",
                "asserts": {"nodes": [], "supports": s, "fabricated": []},
            }
            for n, s in supports.items()
        ]
        meta = {
            "environment": {"messages": messages},
            "endpoint": "red_box",
            "decoy": "blue_box",
            "condition": spec["condition"],
            "intervention": spec["intervention"],
            "deception": "event",
            "key_message_kind": "broadcast",
            "key": "K",
            "second_key": "S",
            "rounds": 3,
            "agents": [{"name": n, "role": r, "model": "sim/a"} for n, r in ROLES.items()]
            + [
                {"name": n, "role": r, "model": "sim/a"}
                for n, r in OBSERVERS.items()
                if spec["intervention"].endswith("observers")
            ],
            "majority": {"participants": 3, "observers": 2, "all": 4},
        }
        conversations.append(
            {
                "run_id": "r",
                "conversation_id": cid,
                "paradigm": "testimony",
                "cell_key": "",
                "cell": "{}",
                "item_id": spec["item"],
                "replicate": 0,
                "seed": 0,
                "status": "done",
                "error": None,
                "meta": json.dumps(meta),
            }
        )
        for sender in supports:
            events.append(
                _event(
                    cid,
                    len(events),
                    kind="message",
                    name="testimony",
                    round=1,
                    turn=0,
                    agent=sender,
                    role=ROLES[sender],
                    channel="public",
                    text="account",
                )
            )
        spoken = set(spec["statements"])
        ordered = sorted(spec["statements"].items(), key=lambda kv: round_of(kv[0][1]))
        for (agent, phase), text in ordered:
            seq = len(events)
            events.append(
                _event(
                    cid,
                    seq,
                    kind="message",
                    name="statement",
                    round=round_of(phase),
                    turn=0,
                    agent=agent,
                    role={**ROLES, **OBSERVERS}[agent],
                    channel="public",
                    text=text,
                )
            )
            label: dict[str, Any] = {
                "run_id": "r",
                "conversation_id": cid,
                "event_seq": seq,
                "judge": judge,
                "model": "rule",
            }
            if (agent, phase) in spec["failed"]:
                label.update(label=None, status="parse_failure", text="not JSON")
            else:
                context = context_for(agent, phase, supports, spoken, CONTAINERS)
                label.update(label=parse_markup(text, context).label(), status="ok", text="")
            labels.append(label)
        for (agent, phase), letter in spec["votes"].items():
            ok = letter != "x"
            events.append(
                _event(
                    cid,
                    len(events),
                    kind="probe",
                    name="vote",
                    round=round_of(phase),
                    agent=agent,
                    role=ROLES[agent],
                    channel="private",
                    text=VALUES.get(letter, "??"),
                    value=json.dumps(VALUES[letter]) if ok else None,
                    status="ok" if ok else "parse_failure",
                )
            )
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(labels, columns=LABEL_COLUMNS),
        pd.DataFrame(conversations, columns=CONVERSATION_BASE_COLUMNS),
    )
