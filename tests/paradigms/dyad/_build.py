"""Hand-built dyad runs: compact conversation specs turned into tidy tables."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import EVENT_COLUMNS, LABEL_COLUMNS, RunTables

FAIL = "FAIL"  # a rating or category whose event has status parse_failure


@dataclass
class Conv:
    """One conversation: raw ratings per checkpoint 0..T and categories per round 1..T."""

    cid: str
    discussant_model: str
    opponent_model: str
    stance: str
    style: str
    wording: str
    ratings_d: list[Any]
    ratings_o: list[Any]
    cats_d: list[str]
    cats_o: list[str]
    status: str = "done"
    extra: dict[str, Any] = field(default_factory=dict)
    """More of the conversation's meta."""
    levels: dict[str, Any] = field(default_factory=dict)
    """Its levels of factors beyond the five (e.g. `rounds`), declared factors of the run."""


def _event(cid: str, seq: int, **fields: Any) -> dict[str, Any]:
    row = {column: None for column in EVENT_COLUMNS}
    row.update(
        run_id="run",
        conversation_id=cid,
        seq=seq,
        text="",
        status="ok",
        model="sim/x",
        prompt_tokens=0,
        completion_tokens=0,
        latency_s=0.0,
        cached=False,
        meta="{}",
    )
    row.update(fields)
    return row


def _conversation_events(conv: Conv) -> list[dict[str, Any]]:
    """Ratings at checkpoint 0, the opening, then per round two turns and the ratings."""
    fields: list[dict[str, Any]] = []

    def ratings(checkpoint: int) -> None:
        for role, series in (("discussant", conv.ratings_d), ("opponent", conv.ratings_o)):
            raw = series[checkpoint]
            failed = raw == FAIL
            fields.append(
                dict(
                    kind="rating",
                    name="self_rating",
                    round=checkpoint,
                    agent=role,
                    role=role,
                    channel="private",
                    value=None if failed else json.dumps(raw),
                    status="parse_failure" if failed else "ok",
                )
            )

    ratings(0)
    fields.append(
        dict(
            kind="message",
            name="opening",
            round=0,
            turn=0,
            agent="discussant",
            role="discussant",
            channel="public",
        )
    )
    for r in range(1, len(conv.cats_d) + 1):
        for turn, (role, cats) in enumerate(
            (("discussant", conv.cats_d), ("opponent", conv.cats_o))
        ):
            cat = cats[r - 1]
            failed = cat == FAIL
            fields.append(
                dict(
                    kind="message",
                    name="turn",
                    round=r,
                    turn=turn,
                    agent=role,
                    role=role,
                    channel="public",
                    value=None if failed else json.dumps(cat),
                    status="parse_failure" if failed else "ok",
                )
            )
        ratings(r)
    return [_event(conv.cid, seq, **f) for seq, f in enumerate(fields)]


def tables(convs: list[Conv]) -> RunTables:
    """The tidy tables of a run holding `convs` (the factors: the five, then any other level
    a conversation has)."""
    events: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for conv in convs:
        events.extend(_conversation_events(conv))
        rounds = len(conv.cats_d)
        cell = {
            "discussant_model": conv.discussant_model,
            "opponent_model": conv.opponent_model,
            "stance": conv.stance,
            "style": conv.style,
            "wording": conv.wording,
            **conv.levels,
        }
        rows.append(
            {
                "run_id": "run",
                "conversation_id": conv.cid,
                "paradigm": "dyad",
                "cell_key": ";".join(f"{k}={v}" for k, v in sorted(cell.items())),
                "cell": json.dumps(cell),
                "item_id": "climate",
                "replicate": 0,
                "seed": 0,
                "status": conv.status,
                "error": None if conv.status == "done" else "boom",
                "meta": json.dumps({"rounds": rounds, **conv.extra}),
                **cell,
            }
        )
    factors = list(dict.fromkeys(k for row in rows for k in json.loads(row["cell"])))
    return RunTables(
        pd.DataFrame(events, columns=EVENT_COLUMNS),
        pd.DataFrame(columns=LABEL_COLUMNS),
        pd.DataFrame(rows),
        {"factors": factors},
    )


def random_run(reps: int = 2, rounds: int = 4, seed: int = 3) -> list[Conv]:
    """A full factorial run (2 pairings) with random ratings and categories."""
    rng = random.Random(seed)
    labels = ["ACCEPT", "REJECT", "IGNORE"]
    convs = []
    levels = itertools.product(
        (("m1", "m1"), ("m1", "m2")),
        ("human", "neutral", "natural"),
        ("manipulative", "plain"),
        ("first", "opposite"),
        range(reps),
    )
    for i, ((dm, om), stance, style, wording, _) in enumerate(levels):
        convs.append(
            Conv(
                f"c{i}",
                dm,
                om,
                stance,
                style,
                wording,
                [rng.randint(0, 6) for _ in range(rounds + 1)],
                [rng.randint(0, 6) for _ in range(rounds + 1)],
                [rng.choice(labels) for _ in range(rounds)],
                [rng.choice(labels) for _ in range(rounds)],
            )
        )
    return convs
