"""The dyad's opinion trajectories for the Friedkin-Johnsen fit: per role and checkpoint, its
private rating and its public interaction state on the aligned 0..6 axis.

Private: the aligned self-rating at checkpoint t. Public: the interaction state after the
role's own message of round t, which the paradigm builds from the ACCEPT / REJECT / IGNORE tags
each reply declares (round 0: the aligned pre-rating, where the state starts). Each role's one
neighbour is the other role; its expressed opinion is its interaction state. The Discussant
speaks first, so before its round-t message it has seen the Opponent's state after round t - 1
(nothing in round 1), the Opponent the Discussant's after round t; a rating at checkpoint t has
seen both round-t messages. A rating or state that is unknown is NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import OPINION_COLUMNS, RunTables
from backchannel.paradigms.dyad._extract import extract
from backchannel.paradigms.dyad._scale import DISCUSSANT, OPPONENT

MODEL_OF = {DISCUSSANT: "discussant_model", OPPONENT: "opponent_model"}


def opinion_trajectories(tables: RunTables) -> pd.DataFrame:
    """One row per (finished conversation, role, checkpoint 0..T): `OPINION_COLUMNS`."""
    frames = extract(tables)
    models = frames.outcomes.set_index("conversation_id")[list(MODEL_OF.values())]
    series: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for (cid, role), part in frames.trajectories.groupby(["conversation_id", "role"], sort=False):
        ordered = part.sort_values("checkpoint")
        series[(str(cid), str(role))] = (
            ordered["rating"].to_list(),
            ordered["state"].to_list(),
        )
    rows: list[tuple[Any, ...]] = []
    for (cid, role), (ratings, states) in series.items():
        other = OPPONENT if role == DISCUSSANT else DISCUSSANT
        other_states = series.get((cid, other), ([], []))[1]
        model = str(models.loc[cid, MODEL_OF[role]])
        for t, (rating, state) in enumerate(zip(ratings, states, strict=True)):
            public = rating if t == 0 else state
            after = _at(other_states, t) if t >= 1 else np.nan
            seen = _at(other_states, t - 1 if role == DISCUSSANT else t)
            before = seen if t >= (2 if role == DISCUSSANT else 1) else np.nan
            rows.append((cid, role, model, t, rating, public, after, before))
    return pd.DataFrame(rows, columns=list(OPINION_COLUMNS))


def _at(values: list[float], index: int) -> float:
    return float(values[index]) if 0 <= index < len(values) else np.nan
