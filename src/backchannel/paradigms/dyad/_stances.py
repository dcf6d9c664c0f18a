"""The dyad's stance pairs: a role's interaction state (its tags) against its 0..6 rating.

The study's two measures of one role, read on the aligned axis: the public stance after a turn is
the interaction state its ACCEPT / REJECT / IGNORE tags have carried it to from its pre-rating,
the private answer the rating it gives right after the round (or the off-the-record rating of
that turn). Pressure is the partner's side: the direction from the role's pre-rating towards the
partner's pre-rating. Definitions: docs/paradigms/dyad.md, "Say versus believe".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms._stance_rows import (
    moved_toward,
    off_the_record,
    pairs_frame,
    skipped_row,
)
from backchannel.paradigms.dyad._extract import RATING_NAME, extract
from backchannel.paradigms.dyad._scale import DISCUSSANT, OPPONENT, align

NO_CATEGORY = "opening: answers no argument, so it has no tag"
NO_PRE_RATING = "no readable pre-rating of the role or its partner"
NO_SIDE = "no partner side: both roles start at the same rating"
NO_STATE = "unlabelled turn: an unreadable tag in this or an earlier turn leaves no state"
NO_PROBE = "missing probe: no rating after the turn"
UNREADABLE = "unreadable rating"

PARTNER = {DISCUSSANT: OPPONENT, OPPONENT: DISCUSSANT}


def _rating(event: dict[Any, Any], wording: str) -> int | None:
    value = event["value"] if event["status"] == "ok" else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 6:
        return None
    return align(value, wording)


def stance_pairs(tables: RunTables) -> pd.DataFrame:
    """One row per turn message (the opening and every tagged turn) of a finished conversation,
    paired with the role's rating after that round."""
    frames = extract(tables)
    wordings = dict(
        zip(frames.outcomes["conversation_id"], frames.outcomes["wording"], strict=True)
    )
    trajectory = frames.trajectories.set_index(["conversation_id", "role", "checkpoint"])
    turns = tables.events_of(kind="message", name=("opening", "turn"))
    ratings = tables.events_of(kind="rating", name=RATING_NAME)
    rated = {
        (str(e["conversation_id"]), str(e["role"]), int(e["round"])): e
        for e in ratings.sort_values("seq").to_dict("records")
    }
    probes = off_the_record(tables.events_of(kind="probe"))
    rows: list[dict[str, Any]] = []
    for turn in turns.sort_values(["conversation_id", "seq"]).to_dict("records"):
        cid, role, r = str(turn["conversation_id"]), str(turn["role"]), int(turn["round"])
        seq = int(turn["seq"])
        opening = turn["name"] == "opening"
        probe = probes.get((cid, seq)) or (None if opening else rated.get((cid, role, r)))
        base = {
            "conversation_id": cid,
            "agent": str(turn["agent"]),
            "role": role,
            "round": r,
            "turn_seq": seq,
            "probe_seq": None if probe is None else int(probe["seq"]),
        }
        if cid not in wordings or role not in PARTNER:
            continue
        if opening:
            rows.append(skipped_row(base, NO_CATEGORY))
            continue
        pre = trajectory["rating"].get((cid, role, 0), np.nan)
        partner = trajectory["rating"].get((cid, PARTNER[role], 0), np.nan)
        if np.isnan(pre) or np.isnan(partner):
            rows.append(skipped_row(base, NO_PRE_RATING))
            continue
        side = int(np.sign(partner - pre))
        state = trajectory["state"].get((cid, role, r), np.nan)
        if side == 0:
            rows.append(skipped_row(base, NO_SIDE))
        elif np.isnan(state):
            rows.append(skipped_row(base, NO_STATE))
        elif probe is None:
            rows.append(skipped_row(base, NO_PROBE))
        elif (rating := _rating(probe, wordings[cid])) is None:
            rows.append(skipped_row(base, UNREADABLE))
        else:
            rows.append(
                {
                    **base,
                    "public_moved": moved_toward(pre, state, side),
                    "private_moved": moved_toward(pre, rating, side),
                    "agree": bool(state == rating),
                    "skipped": None,
                }
            )
    return pairs_frame(rows)
