"""Hand-built run tables for the metric tests: conversations with known votes."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables

ROLES = {"K": "key", "S": "second_key", "A": "member", "B": "member", "C": "member"}
CHECKPOINTS = {"T0": 0, "T1": 1, "R1": 2, "R2": 4, "R3": 6}


def conversation(
    item: str,
    condition: str,
    votes: dict[str, str],
    *,
    model: str = "sim/a",
    intervention: str = "none",
    deception: str = "event",
    kind: str = "direct",
    observers: dict[str, str] | None = None,
    observer_round: int = 7,
    factors: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One conversation: `votes` maps checkpoint -> five letters, the votes of K, S, A, B, C
    (t = true endpoint, d = decoy, u = UNKNOWN, o = another container, x = unreadable, c = cut
    off by the token budget). `observers` maps a checkpoint (or "obs", stored at
    `observer_round`) to the three observers' letters; `factors` are the levels of factors the
    run declares beyond the arm (a column each, and the conversation's cell)."""
    return {
        "item": item,
        "condition": condition,
        "votes": votes,
        "model": model,
        "intervention": intervention,
        "deception": deception,
        "kind": kind,
        "observers": observers or {},
        "observer_round": observer_round,
        "factors": factors or {},
    }


VALUES = {"t": "red_box", "d": "blue_box", "u": "UNKNOWN", "o": "green_box"}


def tables(*specs: dict[str, Any]) -> RunTables:
    events, conversations = [], []
    for spec in specs:
        cell = f"condition={spec['condition']};intervention={spec['intervention']}"
        cid = f"{cell};model={spec['model']}/{spec['item']}/0"
        agents = [{"name": n, "role": r, "model": spec["model"]} for n, r in ROLES.items()]
        agents += [
            {"name": n, "role": "observer", "model": spec["model"]}
            for n in ("P", "Q", "R")
            if spec["observers"]
        ]
        meta = {
            "endpoint": "red_box",
            "decoy": "blue_box",
            "condition": spec["condition"],
            "intervention": spec["intervention"],
            "deception": spec["deception"],
            "key_message_kind": spec["kind"],
            "rounds": 3,
            "agents": agents,
            "majority": {"participants": 3, "observers": 2, "all": 4},
        }
        conversations.append(
            {
                "run_id": "r",
                "conversation_id": cid,
                "paradigm": "testimony",
                "cell_key": "",
                "cell": json.dumps(spec["factors"]),
                "item_id": spec["item"],
                "replicate": 0,
                "seed": 0,
                "status": "done",
                "error": None,
                "meta": json.dumps(meta),
                **spec["factors"],
            }
        )
        rows = [
            (label, dict(zip(ROLES, letters, strict=True)))
            for label, letters in spec["votes"].items()
        ]
        for label, letters in spec["observers"].items():
            rows.append((label, dict(zip("PQR", letters, strict=True))))
        for label, by_agent in rows:
            number = spec["observer_round"] if label.startswith("obs") else CHECKPOINTS[label]
            for agent, letter in by_agent.items():
                ok = letter not in "xc"
                status = {"x": "parse_failure", "c": "truncated"}.get(letter, "ok")
                events.append(
                    {
                        "run_id": "r",
                        "conversation_id": cid,
                        "seq": len(events),
                        "kind": "probe",
                        "name": "vote",
                        "round": number,
                        "turn": None,
                        "agent": agent,
                        "role": ROLES.get(agent, "observer"),
                        "channel": "private",
                        "text": VALUES.get(letter, "??"),
                        "value": json.dumps(VALUES[letter]) if ok else None,
                        "status": status,
                        "model": spec["model"],
                        "prompt_tokens": 0,
                        "completion_tokens": 0,
                        "latency_s": 0.0,
                        "cached": False,
                        "meta": "{}",
                    }
                )
    factors = list(dict.fromkeys(f for spec in specs for f in spec["factors"]))
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame(conversations, columns=[*CONVERSATION_BASE_COLUMNS, *factors]),
    )
