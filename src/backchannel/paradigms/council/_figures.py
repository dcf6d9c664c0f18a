"""The council report's figures: winners per state, verification score per value, Delphi vote
changes; each from the run's tables or metrics, intervals over deliberations."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from backchannel.analysis import RunTables, t_mean_ci
from backchannel.paradigms.council._extract import deliberations
from backchannel.paradigms.council._metrics import deliberation_table, score_table
from backchannel.report import bar_with_intervals, stacked_bars


def _group_label(frame: pd.DataFrame) -> pd.Series:
    """`scenario state` (with the Delphi variant when there is one) as a bar label."""
    label = frame["scenario"].astype(str) + " " + frame["state"].astype(str)
    delphi = frame["delphi"].astype(str)
    return label.where(delphi == "none", label + " (" + delphi + ")")


def winner_shares(metrics: dict[str, Any]) -> pd.DataFrame:
    """Per scenario, Delphi variant and state: the share of deliberations each option won."""
    rows = []
    for g in metrics["groups"]:
        total = sum(g["winner_distribution"].values())
        if not total:
            continue
        row: dict[str, Any] = {k: g[k] for k in ("scenario", "delphi", "state")}
        row |= {option: count / total for option, count in g["winner_distribution"].items()}
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.assign(group=_group_label(frame)).fillna(0.0)


def winner_figure(metrics: dict[str, Any]) -> Figure | None:
    shares = winner_shares(metrics)
    if shares.empty:
        return None
    options = [c for c in shares.columns if c not in ("scenario", "delphi", "state", "group")]
    return stacked_bars(
        shares, "group", options, title="Winner distribution per state", ylabel="share won"
    )


def _means(frame: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    rows = []
    for levels, group in frame.dropna(subset=[column]).groupby(keys, sort=True):
        interval = t_mean_ci(group[column].to_numpy(dtype=float))
        if interval.n < 2:
            continue
        row = dict(zip(keys, levels if isinstance(levels, tuple) else (levels,), strict=True))
        rows.append(row | {"mean": interval.estimate, "low": interval.low, "high": interval.high})
    return pd.DataFrame(rows)


def score_means(tables: RunTables) -> pd.DataFrame:
    """Mean verification score per state and value, with t intervals over evaluators."""
    scores = score_table(deliberations(tables))
    scores = scores[scores["delphi"] == "none"]
    return _means(scores, ["state", "value"], "score")


def score_figure(tables: RunTables) -> Figure | None:
    means = score_means(tables)
    if means.empty:
        return None
    return bar_with_intervals(
        means,
        "value",
        "mean",
        "low",
        "high",
        hue="state",
        title="Verification score per value",
        ylabel="mean score (0-1)",
    )


def vote_change_means(tables: RunTables) -> pd.DataFrame:
    """Mean first-choice changes per Delphi deliberation, per variant and state."""
    table = deliberation_table(deliberations(tables))
    if "vote_changes" not in table:
        return pd.DataFrame()
    table = table[(table["delphi"] != "none") & (table["state"] != "C")]
    return _means(table, ["delphi", "state"], "vote_changes")


def vote_change_figure(tables: RunTables) -> Figure | None:
    means = vote_change_means(tables)
    if means.empty:
        return None
    return bar_with_intervals(
        means,
        "delphi",
        "mean",
        "low",
        "high",
        hue="state",
        title="Delphi vote changes",
        ylabel="first choices changed per deliberation",
    )
