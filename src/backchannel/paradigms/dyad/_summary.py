"""Descriptive dyad metrics: means with t intervals, convergence, categories, agreement, stability.

Every quantity is first computed per conversation (or per conversation and role) and only then
averaged, so each conversation is one unit whatever its number of messages. Each summary has
`overall` rows (pooling the pairings) and `by_pairing` rows, per cell of every factor the run
declares beyond the five analysis levels (see `_cells`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import finite_or_none, t_mean_ci
from backchannel.paradigms.dyad._cells import Cells
from backchannel.paradigms.dyad._extract import PARSE_FAILURE, DyadFrames
from backchannel.paradigms.dyad._scale import ROLES, Category

SHIFT_COLUMNS = (
    *(f"{kind}_{role}" for role in ROLES for kind in ("pre", "post", "shift", "abs_shift")),
    "gap_pre",
    "gap_post",
    "gap_change",
)
CATEGORY_LABELS = (*(c.value for c in Category), PARSE_FAILURE)


def interval(values: pd.Series | np.ndarray) -> dict[str, float | int | str | None]:
    """Mean with its t-based 95 % interval, JSON-ready; `skipped` says why there is none."""
    ci = t_mean_ci(np.asarray(values, dtype=float))
    return {
        "estimate": finite_or_none(ci.estimate),
        "low": finite_or_none(ci.low),
        "high": finite_or_none(ci.high),
        "n": ci.n,
        "skipped": ci.skipped,
    }


def _overall_and_by_pairing(
    cells: Cells, frame: pd.DataFrame, summarise: Callable[[pd.DataFrame], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    return {
        "overall": [{**cell, **summarise(group)} for cell, group in cells.overall(frame)],
        "by_pairing": [{**cell, **summarise(group)} for cell, group in cells.by_pairing(frame)],
    }


def _shift_figures(group: pd.DataFrame) -> dict[str, Any]:
    return {column: interval(group[column]) for column in SHIFT_COLUMNS}


def shift_summary(frames: DyadFrames) -> dict[str, Any]:
    """Means and t intervals of ratings, shifts and gaps: overall, per pairing and per cell of
    every declared factor."""
    data = frames.analysable
    cells = frames.cells
    return {
        **_overall_and_by_pairing(cells, data, _shift_figures),
        "by_cell": [{**cell, **_shift_figures(group)} for cell, group in cells.by_cell(data)],
    }


def convergence_summary(frames: DyadFrames) -> dict[str, Any]:
    """Share of conversations whose post gap is strictly smaller than their pre gap."""

    def summarise(group: pd.DataFrame) -> dict[str, Any]:
        n = len(group)
        count = int(group["converged"].sum())
        return {"converged": count, "n": n, "share": count / n if n else None}

    return _overall_and_by_pairing(frames.cells, frames.analysable, summarise)


def category_rates(frames: DyadFrames) -> dict[str, Any]:
    """Per role: mean over conversations of each category's share of that role's turns."""
    cats = frames.categories
    if cats.empty:
        return {role: {"overall": [], "by_pairing": []} for role in ROLES}
    counts = (
        cats.groupby(["conversation_id", "pairing", "role"])["category"]
        .value_counts()
        .unstack(fill_value=0)
        .reindex(columns=list(CATEGORY_LABELS), fill_value=0)
    )
    rates = counts.div(counts.sum(axis=1), axis=0).reset_index()
    result: dict[str, Any] = {}
    for role in ROLES:
        per_role = rates[rates["role"] == role]
        result[role] = _overall_and_by_pairing(
            frames.cells,
            per_role,
            lambda g: {label: interval(g[label]) for label in CATEGORY_LABELS},
        )
    return result


def agreement_per_conversation(frames: DyadFrames) -> pd.DataFrame:
    """Per (conversation, role): share of respondable rounds whose interaction state equals the
    aligned rating at that round's checkpoint, and their mean absolute difference.

    Respondable rounds are 1..T; a round counts only where both measures exist.
    """
    traj = frames.trajectories
    rounds = traj[(traj["checkpoint"] >= 1) & traj["rating"].notna() & traj["state"].notna()]
    rounds = rounds.assign(
        equal=(rounds["rating"] == rounds["state"]).astype(float),
        abs_diff=(rounds["rating"] - rounds["state"]).abs(),
    )
    grouped = rounds.groupby(["conversation_id", "pairing", "role"], sort=True)
    return grouped.agg(
        share_equal=("equal", "mean"), mean_abs_diff=("abs_diff", "mean"), rounds=("equal", "size")
    ).reset_index()


def agreement_summary(frames: DyadFrames) -> dict[str, Any]:
    """Agreement of the two measures per role, overall and per pairing (conversation means)."""
    per_conv = agreement_per_conversation(frames)

    def summarise(group: pd.DataFrame) -> dict[str, Any]:
        return {
            "share_equal": interval(group["share_equal"]),
            "mean_abs_diff": interval(group["mean_abs_diff"]),
            "role_rounds": int(group["rounds"].sum()),
        }

    return {
        role: _overall_and_by_pairing(frames.cells, per_conv[per_conv["role"] == role], summarise)
        for role in ROLES
    }


def late_stability_per_conversation(frames: DyadFrames, window: int = 3) -> pd.DataFrame:
    """Per (conversation, role): whether the rating is identical at the last `window` checkpoints.

    A role lacking any of those ratings is left out (counted in `late_stability_summary`).
    """
    if window < 1:
        raise ValueError("the stability window is at least one checkpoint")
    traj = frames.trajectories.merge(
        frames.outcomes[["conversation_id", "rounds"]], on="conversation_id"
    )
    late = traj[traj["checkpoint"] > traj["rounds"] - window]
    grouped = late.groupby(["conversation_id", "pairing", "role"], sort=True)["rating"]
    summary = grouped.agg(present="count", distinct="nunique", checkpoints="size").reset_index()
    summary["usable"] = summary["present"] == window
    summary["stable"] = summary["usable"] & (summary["distinct"] == 1)
    return summary


def late_stability_summary(frames: DyadFrames, window: int = 3) -> dict[str, Any]:
    """Share of (conversation, role) units whose last `window` ratings are identical."""
    per_conv = late_stability_per_conversation(frames, window)

    def summarise(group: pd.DataFrame) -> dict[str, Any]:
        usable = group[group["usable"]]
        n = len(usable)
        stable = int(usable["stable"].sum())
        return {
            "stable": stable,
            "n": n,
            "share": stable / n if n else None,
            "left_out": int((~group["usable"]).sum()),
        }

    cells = frames.cells
    result: dict[str, Any] = {"window": window}
    result["all_roles"] = _overall_and_by_pairing(cells, per_conv, summarise)
    for role in ROLES:
        result[role] = _overall_and_by_pairing(cells, per_conv[per_conv["role"] == role], summarise)
    return result
