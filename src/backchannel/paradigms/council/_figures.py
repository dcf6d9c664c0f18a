"""The council report's figures: winners per state, verification score per value, Delphi vote
changes; each from the run's tables or metrics, intervals over deliberations, and never over
two scenarios or two levels of a declared factor at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from backchannel.analysis import Design, RunTables, cell_groups, t_mean_ci
from backchannel.paradigms.council._cells import cell_factors, shown
from backchannel.paradigms.council._extract import Deliberation, deliberations
from backchannel.paradigms.council._metrics import deliberation_table, score_table
from backchannel.paradigms.council._results import CouncilMetrics
from backchannel.paradigms.council._tension import DEFAULT_THRESHOLD
from backchannel.report import bar_with_intervals, stacked_bars


def _group_label(frame: pd.DataFrame, factors: Sequence[str] = ()) -> pd.Series:
    """`scenario state` (with the Delphi variant when there is one, and the levels of further
    factors) as a bar label."""
    label = frame["scenario"].astype(str) + " " + frame["state"].astype(str)
    for factor in factors:
        label = label + f" {factor}=" + frame[factor].map(str)
    delphi = frame["delphi"].astype(str)
    return label.where(delphi == "none", label + " (" + delphi + ")")


def winner_shares(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """Per group: the share of deliberations each option won."""
    rows = []
    for g in metrics.groups:
        total = sum(g.winner_distribution.values())
        if not total:
            continue
        cell = g.cell
        row: dict[str, Any] = {"scenario": cell["scenario"], "delphi": cell["delphi"]}
        row |= {f: shown(cell.get(f)) for f in factors}
        row["state"] = g.state
        row |= {option: count / total for option, count in g.winner_distribution.items()}
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    options = [c for c in frame.columns if c not in ("scenario", "delphi", "state", *factors)]
    frame[options] = frame[options].fillna(0.0)
    return frame.assign(group=_group_label(frame, factors))


def winner_figure(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> Figure | None:
    shares = winner_shares(metrics, factors)
    if shares.empty:
        return None
    keys = ("scenario", "delphi", "state", "group", *factors)
    options = [c for c in shares.columns if c not in keys]
    return stacked_bars(
        shares, "group", options, title="Winner distribution per state", ylabel="share won"
    )


def _means(
    frame: pd.DataFrame, keys: list[str], column: str, levels: dict[str, dict[str, Any]]
) -> pd.DataFrame:
    rows = []
    for cell, group in cell_groups(frame.dropna(subset=[column]), keys, levels):
        interval = t_mean_ci(group[column].to_numpy(dtype=float))
        if interval.n < 2:
            continue
        row = {k: shown(v) for k, v in cell.items()}
        rows.append(row | {"mean": interval.estimate, "low": interval.low, "high": interval.high})
    return pd.DataFrame(rows)


def _cells(tables: RunTables) -> tuple[list[Deliberation], dict[str, dict[str, Any]], list[str]]:
    items = deliberations(tables)
    return items, {d.conversation_id: d.cell for d in items}, cell_factors(Design.of(tables))


def score_means(tables: RunTables) -> pd.DataFrame:
    """Mean verification score per scenario, level of further factors, state and value, with t
    intervals over evaluators."""
    items, levels, factors = _cells(tables)
    return _score_means(items, levels, factors)


def _score_means(
    items: list[Deliberation], levels: dict[str, dict[str, Any]], factors: list[str]
) -> pd.DataFrame:
    scores = score_table(items)
    scores = scores[scores["delphi"] == "none"]
    return _means(scores, ["scenario", *factors, "state", "value"], "score", levels)


def score_figures(tables: RunTables) -> list[tuple[str, Figure]]:
    """One figure per scenario and level of further factors; each is labelled (scenario and
    levels) when there are several."""
    items, levels, factors = _cells(tables)
    means = _score_means(items, levels, factors)
    if means.empty:
        return []
    groups = cell_groups(means, ["scenario", *factors])
    figures = []
    for cell, group in groups:
        label = ", ".join([str(cell["scenario"]), *(f"{f}={cell[f]}" for f in factors)])
        figure = bar_with_intervals(
            group,
            "value",
            "mean",
            "low",
            "high",
            hue="state",
            title="Verification score per value",
            ylabel="mean score (0-1)",
        )
        figures.append((label if len(groups) > 1 else "", figure))
    return figures


def vote_change_means(tables: RunTables) -> pd.DataFrame:
    """Mean first-choice changes per Delphi deliberation, per scenario, level of further
    factors, variant and state."""
    items, levels, factors = _cells(tables)
    table = deliberation_table(items, DEFAULT_THRESHOLD)  # vote changes need no threshold
    if "vote_changes" not in table:
        return pd.DataFrame()
    table = table[(table["delphi"] != "none") & (table["state"] != "C")]
    return _means(table, ["scenario", *factors, "delphi", "state"], "vote_changes", levels)


def vote_change_figure(tables: RunTables) -> Figure | None:
    means = vote_change_means(tables)
    if means.empty:
        return None
    cells = means.drop(columns=["delphi", "state", "mean", "low", "high"]).drop_duplicates()
    if len(cells) > 1:
        extra = [c for c in cells.columns if c != "scenario"]
        means = means.assign(
            delphi=[
                " ".join([str(row["scenario"]), *(f"{c}={row[c]}" for c in extra), row["delphi"]])
                for row in means.to_dict("records")
            ]
        )
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
