"""Flatten the dyad's metrics dictionary into tidy DataFrames for report tables and CSVs."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.paradigms.dyad._extract import DyadFrames
from backchannel.paradigms.dyad._scale import ROLES

OVERALL = "overall"


def _scopes(block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(pairing or 'overall', its summary) pairs of an overall/by_pairing block."""
    return [(OVERALL, block["overall"]), *sorted(block["by_pairing"].items())]


def interval_table(block: dict[str, Any], prefix: dict[str, str] | None = None) -> pd.DataFrame:
    """Rows of (pairing, quantity, estimate, low, high, n, skipped) from a block of intervals."""
    rows = []
    for pairing, summary in _scopes(block):
        for quantity, value in summary.items():
            if isinstance(value, dict) and "estimate" in value:
                rows.append({**(prefix or {}), "pairing": pairing, "quantity": quantity, **value})
    return pd.DataFrame(
        rows,
        columns=[*(prefix or {}), "pairing", "quantity", "estimate", "low", "high", "n", "skipped"],
    )


def shift_table(metrics: dict[str, Any]) -> pd.DataFrame:
    return interval_table(metrics["shifts"])


def convergence_table(metrics: dict[str, Any]) -> pd.DataFrame:
    rows = [{"pairing": p, **s} for p, s in _scopes(metrics["convergence"])]
    return pd.DataFrame(rows, columns=["pairing", "converged", "n", "share"])


def category_table(metrics: dict[str, Any]) -> pd.DataFrame:
    return pd.concat(
        [interval_table(metrics["categories"][r], {"role": r}) for r in ROLES], ignore_index=True
    )


def agreement_table(metrics: dict[str, Any]) -> pd.DataFrame:
    return pd.concat(
        [interval_table(metrics["agreement"][r], {"role": r}) for r in ROLES], ignore_index=True
    )


def stability_table(metrics: dict[str, Any]) -> pd.DataFrame:
    late = metrics["late_stability"]
    rows = [
        {"role": who, "pairing": p, **s}
        for who in ("all_roles", *ROLES)
        for p, s in _scopes(late[who])
    ]
    return pd.DataFrame(rows, columns=["role", "pairing", "stable", "n", "share", "left_out"])


def contrast_table(metrics: dict[str, Any]) -> pd.DataFrame:
    """Welch tests of manipulative minus plain, overall and per pairing."""
    manipulation = metrics["tests"]["manipulation"]
    rows = [
        {"pairing": p, "outcome": outcome, **test}
        for p, per_outcome in _scopes(manipulation)
        for outcome, test in per_outcome.items()
    ]
    return pd.DataFrame(rows)


def wald_table(metrics: dict[str, Any]) -> pd.DataFrame:
    """The joint Wald tests of both models per outcome (or why a model was skipped)."""
    rows = []
    for outcome, models in metrics["tests"]["models"].items():
        for model, fit in models.items():
            key = "pairing_wald" if model == "main" else "pairing_x_style_wald"
            wald = fit.get(key, {})
            rows.append(
                {
                    "outcome": outcome,
                    "model": model,
                    "formula": fit["formula"],
                    "n": fit["n"],
                    "test": "pairing" if model == "main" else "pairing x style",
                    "chi2": wald.get("statistic"),
                    "df": wald.get("df"),
                    "p": wald.get("p"),
                    "skipped": fit.get("skipped") or wald.get("skipped"),
                }
            )
    return pd.DataFrame(rows)


def coefficient_table(metrics: dict[str, Any]) -> pd.DataFrame:
    rows = [
        {"outcome": outcome, "model": model, **coefficient}
        for outcome, models in metrics["tests"]["models"].items()
        for model, fit in models.items()
        for coefficient in fit.get("coefficients", [])
    ]
    return pd.DataFrame(rows, columns=["outcome", "model", "term", "estimate", "se", "z", "p"])


def pairing_comparison_table(metrics: dict[str, Any]) -> pd.DataFrame:
    rows = [
        {"outcome": outcome, **row}
        for outcome, comparisons in metrics["tests"]["pairing_comparisons"].items()
        for row in comparisons
    ]
    return pd.DataFrame(rows)


def trajectory_means(frames: DyadFrames) -> pd.DataFrame:
    """Mean aligned rating and interaction state per (pairing, role, checkpoint)."""
    traj = frames.trajectories
    grouped = traj.groupby(["pairing", "role", "checkpoint"], sort=True)
    return grouped.agg(
        rating=("rating", "mean"),
        state=("state", "mean"),
        conversations=("rating", "count"),
    ).reset_index()
