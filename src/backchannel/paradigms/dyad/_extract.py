"""Turn a run's tidy tables into the dyad's conversation-level frames.

Everything downstream (summaries, tests, the report) reads these frames, never raw events, so the
unit of analysis is always the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.paradigms.dyad._cells import LEVELS, Cells
from backchannel.paradigms.dyad._scale import (
    DISCUSSANT,
    OPPONENT,
    ROLES,
    Category,
    align,
    interaction_states,
    parse_category,
)

PARSE_FAILURE = "PARSE_FAILURE"
RATING_NAME = "self_rating"


def pairing_of(discussant_model: str, opponent_model: str) -> str:
    """The ordered model pairing of a conversation."""
    return f"{discussant_model} vs {opponent_model}"


@dataclass(frozen=True)
class DyadFrames:
    """Conversation-level frames of one dyad run.

    - `outcomes`: one row per finished conversation: factors, pairing, rounds, aligned pre and
      post ratings per role, shifts, gaps, convergence and `complete` (all four ratings present).
    - `trajectories`: one row per (conversation, role, checkpoint 0..T): aligned rating and
      interaction state (NaN where unavailable).
    - `categories`: one row per (conversation, role, round 1..T) turn message: its category or
      PARSE_FAILURE.
    - `counts`: conversations seen, failed and finished; finished conversations excluded from
      shift analysis; checkpoints without a readable rating; rating events whose status is not
      `ok`; turn messages whose category could not be read; (role, round) pairs of rounds 1..T
      without an interaction state (after an unreadable category, or without pre-ratings).
    - `cells`: the run's design and each conversation's factor levels, which every figure
      groups by (`outcomes` also carries the factors beyond the five levels as columns).
    """

    outcomes: pd.DataFrame
    trajectories: pd.DataFrame
    categories: pd.DataFrame
    counts: dict[str, int]
    cells: Cells = field(default_factory=Cells)

    def __post_init__(self) -> None:
        for column in ("conversation_id", "pairing", "complete"):
            if column not in self.outcomes.columns:
                raise ValueError(f"outcomes lacks column {column!r}")
        for column in ("conversation_id", "role", "checkpoint", "rating", "state"):
            if column not in self.trajectories.columns:
                raise ValueError(f"trajectories lacks column {column!r}")

    @property
    def analysable(self) -> pd.DataFrame:
        """Outcomes of the conversations with all four pre and post ratings."""
        return self.outcomes[self.outcomes["complete"]].reset_index(drop=True)


def _meta_rounds(meta: dict[str, Any]) -> int | None:
    return int(meta["rounds"]) if isinstance(meta.get("rounds"), int) else None


def _levels(conv: dict[Any, Any], meta: dict[str, Any]) -> dict[str, str]:
    """The conversation's five analysis levels: its factor columns, else those it recorded.

    A level held fixed in `settings:` has no column, so the protocol records every level.
    """
    recorded = meta.get("levels") or {}
    levels = {}
    for factor in LEVELS:
        value = conv.get(factor)
        if value is None or (isinstance(value, float) and np.isnan(value)):
            value = recorded.get(factor)
        if value is None:
            raise ValueError(f"conversation {conv['conversation_id']} has no level of {factor!r}")
        levels[factor] = str(value)
    return levels


def _key(event: dict[Any, Any]) -> tuple[str, str, int]:
    return (str(event["conversation_id"]), str(event["role"]), int(event["round"]))


def extract(tables: RunTables) -> DyadFrames:
    """Build the dyad frames from a run's events and conversations."""
    conversations = tables.conversations
    done = tables.done_conversations()
    failed = len(conversations) - len(done)
    design = Design.of(tables)
    cells = Cells(design, design.levels(done))

    # Turns and ratings of every conversation, as before: a rating that failed in an unfinished
    # conversation is still counted among the failed rating events.
    turns = tables.events_of(kind="message", name="turn", done=False)
    ratings = tables.events_of(kind="rating", name=RATING_NAME, done=False)
    run_rounds = int(turns["round"].max()) if len(turns) else 0

    rating_index: dict[tuple[str, str, int], int | None] = {}
    for event in ratings.sort_values("seq").to_dict("records"):
        value = event["value"] if event["status"] == "ok" else None
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 6
        rating_index[_key(event)] = value if ok else None
    category_index: dict[tuple[str, str, int], Category | None] = {}
    for event in turns.sort_values("seq").to_dict("records"):
        value = event["value"] if event["status"] == "ok" else None
        category_index[_key(event)] = parse_category(value)

    outcome_rows: list[dict[str, Any]] = []
    trajectory_rows: list[dict[str, Any]] = []
    category_rows: list[dict[str, Any]] = []
    missing_ratings = 0
    for conv in done.to_dict("records"):
        cid = str(conv["conversation_id"])
        meta = conv["meta"]
        rounds = _meta_rounds(meta) or run_rounds
        levels = _levels(conv, meta)
        wording = levels["wording"]
        pairing = pairing_of(levels["discussant_model"], levels["opponent_model"])
        base = {"conversation_id": cid, "pairing": pairing}

        aligned: dict[str, list[int | None]] = {}
        for role in ROLES:
            series: list[int | None] = []
            for checkpoint in range(rounds + 1):
                raw = rating_index.get((cid, role, checkpoint))
                if raw is None:
                    missing_ratings += 1
                series.append(None if raw is None else align(raw, wording))
            aligned[role] = series

        cats: dict[str, list[Category | None]] = {role: [] for role in ROLES}
        for r in range(1, rounds + 1):
            for role in ROLES:
                category = category_index.get((cid, role, r))
                cats[role].append(category)
                label = PARSE_FAILURE if category is None else category.value
                category_rows.append({**base, "role": role, "round": r, "category": label})

        start_d, start_o = aligned[DISCUSSANT][0], aligned[OPPONENT][0]
        states: dict[str, list[float]] = {role: [np.nan] * (rounds + 1) for role in ROLES}
        if start_d is not None and start_o is not None:
            path = interaction_states(
                start_d, start_o, zip(cats[DISCUSSANT], cats[OPPONENT], strict=True)
            )
            states = {
                role: [np.nan if v is None else float(v) for v in path.of(role)] for role in ROLES
            }
        for role in ROLES:
            for checkpoint in range(rounds + 1):
                rating = aligned[role][checkpoint]
                trajectory_rows.append(
                    {
                        **base,
                        "role": role,
                        "checkpoint": checkpoint,
                        "rating": np.nan if rating is None else float(rating),
                        "state": states[role][checkpoint],
                    }
                )

        outcome: dict[str, Any] = {**base, **levels, "rounds": rounds}
        for role in ROLES:
            pre, post = aligned[role][0], aligned[role][rounds]
            outcome[f"pre_{role}"] = np.nan if pre is None else float(pre)
            outcome[f"post_{role}"] = np.nan if post is None else float(post)
        outcome_rows.append(outcome)

    outcomes = _with_outcomes(pd.DataFrame(outcome_rows, columns=_OUTCOME_INPUT))
    for factor in cells.extra:
        if factor not in outcomes.columns:  # `rounds` already is the conversation's own
            ids = outcomes["conversation_id"]
            values = [cells.levels[cid].get(factor) for cid in ids]
            outcomes[factor] = pd.Series(values, index=outcomes.index, dtype=object)
    category_frame = pd.DataFrame(
        category_rows, columns=["conversation_id", "pairing", "role", "round", "category"]
    )
    counts = {
        "conversations": len(conversations),
        "failed_conversations": failed,
        "finished_conversations": len(done),
        "excluded_from_shift": int((~outcomes["complete"]).sum()),
        "missing_ratings": missing_ratings,
        "failed_rating_events": int((ratings["status"] != "ok").sum() if len(ratings) else 0),
        "category_parse_failures": int((category_frame["category"] == PARSE_FAILURE).sum()),
        "rounds_without_state": sum(
            1 for row in trajectory_rows if row["checkpoint"] >= 1 and np.isnan(row["state"])
        ),
    }
    trajectories = pd.DataFrame(
        trajectory_rows,
        columns=["conversation_id", "pairing", "role", "checkpoint", "rating", "state"],
    )
    return DyadFrames(outcomes, trajectories, category_frame, counts, cells)


_OUTCOME_INPUT = [
    "conversation_id",
    "pairing",
    *LEVELS,
    "rounds",
    *(f"{when}_{role}" for role in ROLES for when in ("pre", "post")),
]


def _with_outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """Add shifts, gaps and convergence; `complete` marks rows with all four ratings."""
    frame = frame.copy()
    ratings = [f"{when}_{role}" for role in ROLES for when in ("pre", "post")]
    frame["complete"] = frame[ratings].notna().all(axis=1).astype(bool)
    for role in ROLES:
        frame[f"shift_{role}"] = frame[f"post_{role}"] - frame[f"pre_{role}"]
        frame[f"abs_shift_{role}"] = frame[f"shift_{role}"].abs()
    frame["gap_pre"] = (frame[f"pre_{DISCUSSANT}"] - frame[f"pre_{OPPONENT}"]).abs()
    frame["gap_post"] = (frame[f"post_{DISCUSSANT}"] - frame[f"post_{OPPONENT}"]).abs()
    frame["gap_change"] = frame["gap_post"] - frame["gap_pre"]
    frame["converged"] = (frame["gap_post"] < frame["gap_pre"]) & frame["complete"]
    return frame
