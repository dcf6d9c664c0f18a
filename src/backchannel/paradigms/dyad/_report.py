"""The dyad's report: trajectories per pairing, shift and gap tables with intervals, the tests.

Every table and figure keeps the cells of the factors a run declares beyond the study's five
(e.g. `rounds`) apart: their levels lead each table row and label each figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, cell_groups
from backchannel.paradigms.dyad import _flatten as flat
from backchannel.paradigms.dyad._extract import extract, pairing_of
from backchannel.paradigms.dyad._results import DyadMetrics
from backchannel.paradigms.dyad._scale import ROLES
from backchannel.report import Report, bar_with_intervals, line_over_rounds, shared_ylim

AXIS = "aligned axis: 6 = strongest support for the topic's first statement"


def _trajectory_long(means: pd.DataFrame, extra: Sequence[str]) -> pd.DataFrame:
    """One row per (extra levels, pairing, series, checkpoint), series = '<role> rating' /
    '<role> state'."""
    keys = [*extra, "pairing", "role", "checkpoint"]
    parts = []
    for measure in ("rating", "state"):
        part = means[[*keys, measure]].rename(columns={measure: "mean"})
        part = part.assign(series=part["role"] + " " + measure)
        parts.append(part)
    return pd.concat(parts, ignore_index=True).dropna(subset=["mean"])


def _cell_label(levels: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value}" for name, value in levels.items())


def _pairing_levels(tables: RunTables) -> dict[str, dict[str, Any]]:
    """What each ordered pairing stands for in the viewer's filters: its two models' levels
    (those that are factors of the run); `all` pools them."""
    factors = Design.of(tables).factors
    levels: dict[str, dict[str, Any]] = {"all": {}}
    for cell in Design.of(tables).levels(tables.conversations).values():
        discussant, opponent = cell.get("discussant_model"), cell.get("opponent_model")
        if "discussant_model" in factors and "opponent_model" in factors:
            levels[pairing_of(str(discussant), str(opponent))] = {
                "discussant_model": discussant,
                "opponent_model": opponent,
            }
    return levels


def fill_report(tables: RunTables, metrics: DyadMetrics, report: Report) -> None:
    """Add the dyad's sections to `report` from the run's tables and its metrics."""
    frames = extract(tables)
    extra = frames.cells.extra
    counts = metrics.counts
    report.derive_levels("pairing", _pairing_levels(tables))
    report.section(
        "Conversations",
        "Every quantity is computed per conversation and then averaged over conversations. "
        "Ratings are on the " + AXIS + ".",
    )
    report.metrics(counts.model_dump())
    if counts.excluded_from_shift or counts.category_parse_failures:
        report.note(
            f"{counts.excluded_from_shift} finished conversations lack a pre or post rating "
            "and are left out of the shift analysis; "
            f"{counts.category_parse_failures} turn messages had no readable category; "
            "from such a message on, both roles' interaction states are unknown "
            f"({counts.rounds_without_state} role-rounds without a state, left out of the "
            "agreement)."
        )
    if extra:
        report.note(
            f"The run also varies {', '.join(extra)}: every table and figure below is per level "
            "of it, never averaged over its levels."
        )

    report.section(
        "Trajectories",
        "Mean aligned self-rating and mean interaction state of each role at every checkpoint "
        "(0 = before round 1, r = after round r), one figure per ordered model pairing.",
    )
    means = flat.trajectory_means(frames)
    long = _trajectory_long(means, extra)
    for cell, group in cell_groups(long, ["pairing", *extra]):
        levels = {f: cell[f] for f in extra}
        title = str(cell["pairing"]) + (f" ({_cell_label(levels)})" if extra else "")
        fig = line_over_rounds(
            group.sort_values(["series", "checkpoint"]),
            "checkpoint",
            "mean",
            "series",
            title=title,
            ylabel="mean (" + AXIS.split(":")[0] + ")",
            ylim=shared_ylim(long, "mean"),
        )
        report.figure(fig, f"Rating and interaction state over rounds: {title}")
    report.table("trajectories", means, "Means per pairing, role and checkpoint")

    report.section("Shifts and gaps", "Means with t-based 95 % intervals, overall and per pairing.")
    shifts = flat.shift_table(metrics, extra)
    plotted = shifts[
        shifts["quantity"].isin([f"shift_{r}" for r in ROLES])
        & shifts["low"].notna()
        & shifts["high"].notna()
    ]
    # One figure per cell of the further factors (a single one for the study's design).
    for cell, group in cell_groups(plotted, list(extra)) if not plotted.empty else []:
        label = f" ({_cell_label(cell)})" if extra else ""
        fig = bar_with_intervals(
            group,
            "pairing",
            "estimate",
            "low",
            "high",
            "quantity",
            title="Signed shift (post - pre) per role" + label,
            ylabel="shift on the aligned axis",
            ylim=shared_ylim(plotted, "estimate", "low", "high"),
        )
        report.figure(fig, "Signed shift per role with 95 % t intervals" + label)
    report.table("shifts", shifts, "Ratings, shifts and gaps")
    factors = list(Design.of(tables).factors)
    report.table(
        "shifts_by_cell",
        flat.cell_shift_table(metrics, factors),
        "Ratings, shifts and gaps per cell of every factor",
    )
    report.table("convergence", flat.convergence_table(metrics, extra), "Post gap < pre gap")

    report.section(
        "Categories and the two measures",
        "ACCEPT / REJECT / IGNORE shares per role (conversation means); agreement of the "
        "interaction state with the self-rating on respondable rounds; late stability of the "
        f"rating over the last {metrics.late_stability.window} checkpoints.",
    )
    report.table("categories", flat.category_table(metrics, extra), "Category shares per role")
    report.table("agreement", flat.agreement_table(metrics, extra), "State vs rating agreement")
    report.table("late_stability", flat.stability_table(metrics, extra), "Identical late ratings")

    report.section(
        "Tests",
        "Welch tests of manipulative minus plain conversations; OLS with HC3 errors and joint "
        "Wald tests; Holm-corrected Welch comparisons of pairings.",
    )
    report.table("manipulation_tests", flat.contrast_table(metrics, extra), "Manipulative - plain")
    report.table("wald_tests", flat.wald_table(metrics), "Joint Wald tests (HC3)")
    report.table("coefficients", flat.coefficient_table(metrics), "OLS coefficients (HC3)")
    report.table(
        "pairing_comparisons", flat.pairing_comparison_table(metrics), "Pairwise Welch, Holm"
    )
