"""Flatten the dyad's typed results into tidy DataFrames for report tables and CSVs.

Each table leads with the levels of the factors the run declares beyond the five analysis
levels (`extra`; none in the study's design), so rows of two conditions stay apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import cell_groups
from backchannel.paradigms.dyad._extract import DyadFrames
from backchannel.paradigms.dyad._results import (
    Contrast,
    DyadMetrics,
    Interval,
    PerRole,
    R,
    Row,
    Scoped,
    Shift,
    Stability,
    Welch,
)
from backchannel.paradigms.dyad._scale import ROLES

OVERALL = "overall"
INTERVAL_COLUMNS = ["estimate", "low", "high", "n", "skipped"]


def _levels(row: Row, names: Sequence[str]) -> dict[str, Any]:
    return {name: row.cell.get(name) for name in names}


def _scopes(block: Scoped[R]) -> list[tuple[str, R]]:
    """(pairing or 'overall', row) of every row of an overall/by_pairing block."""
    return [(OVERALL, row) for row in block.overall] + [
        (str(row.pairing), row) for row in block.by_pairing
    ]


def _intervals(row: Row) -> list[tuple[str, Interval]]:
    return [(name, value) for name, value in row if isinstance(value, Interval)]


def interval_rows(
    rows: Sequence[tuple[str, Row]], extra: Sequence[str], prefix: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    return [
        {
            **(prefix or {}),
            **_levels(row, extra),
            "pairing": pairing,
            "quantity": quantity,
            **value.model_dump(),
        }
        for pairing, row in rows
        for quantity, value in _intervals(row)
    ]


def interval_table(
    block: Scoped[Any], extra: Sequence[str] = (), prefix: dict[str, str] | None = None
) -> pd.DataFrame:
    """Rows of (extra levels, pairing, quantity, estimate, low, high, n, skipped)."""
    return pd.DataFrame(
        interval_rows(_scopes(block), extra, prefix),
        columns=[*(prefix or {}), *extra, "pairing", "quantity", *INTERVAL_COLUMNS],
    )


def shift_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    shifts = metrics.shifts
    block = Scoped[Shift](overall=shifts.overall, by_pairing=shifts.by_pairing)
    return interval_table(block, extra)


def cell_shift_table(metrics: DyadMetrics, factors: Sequence[str]) -> pd.DataFrame:
    """Ratings, shifts and gaps per cell of every declared factor."""
    rows = [(str(row.pairing), row) for row in metrics.shifts.by_cell]
    return pd.DataFrame(
        interval_rows(rows, factors),
        columns=[*factors, "pairing", "quantity", *INTERVAL_COLUMNS],
    )


def convergence_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    rows = [
        {
            **_levels(row, extra),
            "pairing": pairing,
            "converged": row.converged,
            "n": row.n,
            "share": row.share,
        }
        for pairing, row in _scopes(metrics.convergence)
    ]
    return pd.DataFrame(rows, columns=[*extra, "pairing", "converged", "n", "share"])


def _per_role(block: PerRole[Any], extra: Sequence[str]) -> pd.DataFrame:
    return pd.concat(
        [interval_table(getattr(block, r), extra, {"role": r}) for r in ROLES], ignore_index=True
    )


def category_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    return _per_role(metrics.categories, extra)


def agreement_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    return _per_role(metrics.agreement, extra)


def stability_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    late = metrics.late_stability
    rows = []
    for who in ("all_roles", *ROLES):
        block: Scoped[Stability] = getattr(late, who)
        for pairing, row in _scopes(block):
            rows.append(
                {
                    "role": who,
                    **_levels(row, extra),
                    "pairing": pairing,
                    "stable": row.stable,
                    "n": row.n,
                    "share": row.share,
                    "left_out": row.left_out,
                }
            )
    return pd.DataFrame(
        rows, columns=["role", *extra, "pairing", "stable", "n", "share", "left_out"]
    )


def contrast_table(metrics: DyadMetrics, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Welch tests of manipulative minus plain, overall and per pairing."""
    manipulation = metrics.tests.manipulation
    block = Scoped[Contrast](overall=manipulation.overall, by_pairing=manipulation.by_pairing)
    rows = [
        {**_levels(row, extra), "pairing": pairing, "outcome": outcome, **test.model_dump()}
        for pairing, row in _scopes(block)
        for outcome, test in row
        if isinstance(test, Welch)
    ]
    return pd.DataFrame(rows)


def wald_table(metrics: DyadMetrics) -> pd.DataFrame:
    """The joint Wald tests of both models per outcome (or why a model was skipped)."""
    rows = []
    for outcome, models in metrics.tests.models.items():
        for model, fit in models:
            wald = fit.pairing_wald if model == "main" else fit.pairing_x_style_wald
            rows.append(
                {
                    "outcome": outcome,
                    "model": model,
                    "formula": fit.formula,
                    "n": fit.n,
                    "test": "pairing" if model == "main" else "pairing x style",
                    "chi2": wald.statistic if wald else None,
                    "df": wald.df if wald else None,
                    "p": wald.p if wald else None,
                    "skipped": fit.skipped or (wald.skipped if wald else None),
                }
            )
    return pd.DataFrame(rows)


def coefficient_table(metrics: DyadMetrics) -> pd.DataFrame:
    rows = [
        {"outcome": outcome, "model": model, **coefficient.model_dump()}
        for outcome, models in metrics.tests.models.items()
        for model, fit in models
        for coefficient in fit.coefficients or []
    ]
    return pd.DataFrame(rows, columns=["outcome", "model", "term", "estimate", "se", "z", "p"])


def pairing_comparison_table(metrics: DyadMetrics) -> pd.DataFrame:
    rows = [
        {"outcome": outcome, **row.model_dump(mode="json")}
        for outcome, comparisons in metrics.tests.pairing_comparisons.items()
        for row in comparisons
    ]
    return pd.DataFrame(rows)


def trajectory_means(frames: DyadFrames) -> pd.DataFrame:
    """Mean aligned rating and interaction state per (extra levels, pairing, role, checkpoint):
    conversations of different cells (e.g. of different `rounds`) are never averaged."""
    extra = frames.cells.extra
    parts = []
    for cell, group in cell_groups(frames.trajectories, ["pairing", *extra], frames.cells.levels):
        means = (
            group.groupby(["role", "checkpoint"], sort=True)
            .agg(
                rating=("rating", "mean"),
                state=("state", "mean"),
                conversations=("rating", "count"),
            )
            .reset_index()
        )
        levels = {f: cell[f] for f in extra}
        parts.append(means.assign(**levels, pairing=cell["pairing"]))
    columns = [*extra, "pairing", "role", "checkpoint", "rating", "state", "conversations"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]
