"""The council's stance pairs: what an advocate argues in the debate against the option it
names off the record right after that turn.

An advocate's public stance is the option the protocol assigns it (it argues for it in every
round: its agent name `advocate_<option id>`), which is also its starting point; the pressure
is the debate's case for the other options. So the public side never moves here, and a
private answer naming another option is hidden change. The debate asks advocates nothing
privately, so without the off-the-record probe every pair is skipped. Definitions:
docs/paradigms/council.md, "Say versus believe".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms._stance_rows import off_the_record, pairs_frame, skipped_row

ADVOCATE = "advocate"
PREFIX = "advocate_"
NO_PROBE = "missing probe: the run asked no off-the-record choice after this turn"
UNREADABLE = "unreadable option: the off-the-record answer names no option of the scenario"
FAILED_TURN = "unlabelled turn: the advocate's message failed"
UNKNOWN_OPTION = "unlabelled turn: the advocate's option is not one of the scenario's"


def _option(value: Any, options: tuple[str, ...]) -> str | None:
    """The option an off-the-record answer names (a label of the scenario's option ids)."""
    if isinstance(value, dict):
        value = value.get("option")
    return value if isinstance(value, str) and value in options else None


def stance_pairs(tables: RunTables) -> pd.DataFrame:
    """One row per advocate turn of a finished deliberation, with its off-the-record choice."""
    done = tables.done_conversations()
    options = {
        str(row["conversation_id"]): tuple(str(o) for o in (row["meta"].get("options") or ()))
        for row in done.to_dict("records")
    }
    turns = tables.events_of(kind="message", role=ADVOCATE)
    probes = off_the_record(tables.events_of(kind="probe"))
    rows: list[dict[str, Any]] = []
    for turn in turns.sort_values(["conversation_id", "seq"]).to_dict("records"):
        cid, seq, agent = str(turn["conversation_id"]), int(turn["seq"]), str(turn["agent"])
        probe = probes.get((cid, seq))
        base = {
            "conversation_id": cid,
            "agent": agent,
            "role": ADVOCATE,
            "round": int(turn["round"]),
            "turn_seq": seq,
            "probe_seq": None if probe is None else int(probe["seq"]),
        }
        own = agent.removeprefix(PREFIX)
        if turn["status"] != "ok":
            rows.append(skipped_row(base, FAILED_TURN))
        elif own not in options.get(cid, ()):
            rows.append(skipped_row(base, UNKNOWN_OPTION))
        elif probe is None:
            rows.append(skipped_row(base, NO_PROBE))
        elif probe["status"] != "ok" or (chosen := _option(probe["value"], options[cid])) is None:
            rows.append(skipped_row(base, UNREADABLE))
        else:
            rows.append(
                {
                    **base,
                    "public_moved": False,
                    "private_moved": chosen != own,
                    "agree": chosen == own,
                    "skipped": None,
                }
            )
    return pairs_frame(rows)
