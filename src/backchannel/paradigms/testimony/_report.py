"""The testimony report: outcomes by checkpoint per condition, C0 vs C1 per deception type,
exits and observers side by side, and the paired tests, all read from the typed results.

Figures are drawn per series: the model, and the level of every other factor the run declares
(`model, temperature=0.5`), so two levels of a factor never share a line.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel

from backchannel.analysis import CellRow, RunTables, rows_frame
from backchannel.paradigms.testimony._cells import ARM_KEYS
from backchannel.paradigms.testimony._lineage_report import fill_lineage
from backchannel.paradigms.testimony._metrics import OUTCOMES
from backchannel.paradigms.testimony._results import TestimonyMetrics
from backchannel.report import Report, bar_with_intervals, line_over_rounds, shared_ylim

_ARM_NAMES = {
    "none": "",
    "honest_exit": "honest exit",
    "null_exit": "null exit",
    "false_exit": "false exit",
    "passive_observers": "passive obs.",
    "active_observers": "active obs.",
}
_OUTCOME_NAMES = {"truth": "truth majority", "decoy": "decoy majority", "none": "no consensus"}


def extra_keys(rows: Sequence[CellRow]) -> list[str]:
    """The factor keys of `rows` beyond the arm keys, in their order."""
    return list(dict.fromkeys(k for row in rows for k in row.cell if k not in ARM_KEYS))


def series_of(cell: dict[str, object], extra: Sequence[str]) -> str:
    """A figure's series: the model, then `name=level` of every other factor."""
    model = cell.get("model", cell.get("model_a", ""))
    return ", ".join([str(model), *(f"{k}={cell.get(k)}" for k in extra)])


def cell_frame(rows: Sequence[BaseModel], extra: Sequence[str]) -> pd.DataFrame:
    """Typed rows as a table, with their `series`."""
    frame = rows_frame(rows)
    if frame.empty:
        return frame
    series = [series_of(r.cell, extra) for r in rows if isinstance(r, CellRow)]
    return frame.assign(series=series)


RATE_COLUMNS = ["model", "condition", "intervention", "series", "group", "checkpoint",
                "outcome", "runs", "rate", "low", "high"]  # fmt: skip


def rates_frame(metrics: TestimonyMetrics) -> pd.DataFrame:
    """The outcome rates as a flat table: one row per arm, cell, group, checkpoint and outcome."""
    extra = extra_keys(metrics.outcome_rates)
    rows = []
    for entry in metrics.outcome_rates:
        for outcome in OUTCOMES:
            rate = getattr(entry, outcome)
            rows.append(
                {
                    **{k: entry.cell.get(k) for k in (*ARM_KEYS, *extra)},
                    "series": series_of(entry.cell, extra),
                    "group": entry.group,
                    "checkpoint": entry.checkpoint,
                    "outcome": _OUTCOME_NAMES[outcome],
                    "runs": entry.runs,
                    "rate": rate.estimate,
                    "low": rate.low,
                    "high": rate.high,
                }
            )
    columns = [*ARM_KEYS, *extra, *RATE_COLUMNS[3:]]
    return pd.DataFrame(rows, columns=columns)


def _by_deception(metrics: TestimonyMetrics, last: str) -> pd.DataFrame:
    """Truth-majority rate at the final checkpoint per series, deception type and condition."""
    extra = extra_keys(metrics.truth_by_deception)
    found = [
        {
            "series": series_of(r.cell, extra),
            "deception": r.deception,
            "condition": r.cell.get("condition"),
            "rate": r.truth.estimate,
            "low": r.truth.low,
            "high": r.truth.high,
        }
        for r in metrics.truth_by_deception
        if r.cell.get("intervention") == "none" and r.checkpoint == last and r.deception != "all"
    ]
    columns = ["series", "deception", "condition", "rate", "low", "high"]
    return pd.DataFrame(found, columns=columns).sort_values(["series", "deception", "condition"])


def fill_report(tables: RunTables, metrics: TestimonyMetrics, report: Report) -> None:
    """Add the testimony sections to `report` from the run's typed results."""
    checkpoints = list(metrics.checkpoints)
    last = checkpoints[-1]
    report.section(
        "Runs",
        "Outcomes are those of the analysed group: the four story roles other than the key "
        "role, in every condition. A truth majority is at least 3 of the 4 voting the true "
        "endpoint, a decoy majority at least 3 voting l(m-1); anything else is no consensus.",
    )
    report.metrics(
        {
            "conversations": metrics.conversations,
            "not_done": metrics.not_done,
            "failed_votes": metrics.failed_votes,
            "truncated_votes": metrics.truncated_votes,
        }
    )
    if metrics.pooled:
        contrasted = "; ".join(
            f"{section} pools {', '.join(factors)}" for section, factors in metrics.pooled.items()
        )
        report.note(
            "Every table is per arm and level of every other factor of the run, except where a "
            f"section's definition contrasts a factor's levels or counts the whole run: "
            f"{contrasted}."
        )
    if metrics.failed_votes:
        report.note(
            f"{metrics.failed_votes} votes could not be read; they count as failed votes "
            "(never as an answer) and cannot make a majority."
        )
    if metrics.truncated_votes:
        report.note(
            f"{metrics.truncated_votes} votes were cut off by their token budget "
            "(vote_max_tokens, reasoning included); they count as truncated, never as an "
            "answer. Raise vote_max_tokens or lower the reasoning effort."
        )
    rates = rates_frame(metrics)
    if rates.empty:
        report.note("No finished conversation with votes: nothing to show.")
        return
    order = {label: i for i, label in enumerate(checkpoints)}
    report.section(
        "Outcomes by checkpoint",
        "Share of runs with each outcome at T0 (own window only), T1 (after the testimony) and "
        "after every public round, per condition; shaded bands are Wilson 95 % intervals.",
    )
    main = rates[(rates["group"] == "participants") & (rates["intervention"] == "none")]
    for model in sorted(main["series"].unique()):
        for outcome in _OUTCOME_NAMES.values():
            group = main[(main["series"] == model) & (main["outcome"] == outcome)]
            if group.empty:
                continue
            frame = group.assign(step=group["checkpoint"].map(order)).sort_values("step")
            fig = line_over_rounds(
                frame,
                "step",
                "rate",
                "condition",
                title=f"{outcome} by checkpoint ({model})",
                ylabel="share of runs",
                band_low="low",
                band_high="high",
                ylim=shared_ylim(main[main["outcome"] == outcome], "rate", "low", "high"),
            )
            axes = fig.axes[0]
            axes.set_xticks(range(len(checkpoints)), checkpoints)
            axes.set_xlabel("checkpoint")
            report.figure(fig, f"{outcome} at each checkpoint, C0 and C1, model {model}.")
    deception = _by_deception(metrics, last)
    if not deception.empty:
        report.section(
            "C0 vs C1 by deception type",
            f"Truth-majority rate at {last} per deception type, with Wilson 95 % intervals.",
        )
        for model_level, group in deception.groupby("series", sort=True):
            model = str(model_level)
            fig = bar_with_intervals(
                group,
                "deception",
                "rate",
                "low",
                "high",
                "condition",
                title=f"truth majority at {last} ({model})",
                ylabel="share of runs",
                ylim=shared_ylim(deception, "rate", "low", "high"),
            )
            report.figure(fig, f"C0 and C1 truth-majority rates per deception type, {model}.")
    gaps = cell_frame(metrics.condition_gaps, extra_keys(metrics.condition_gaps))
    if not gaps.empty:
        _gap_figures(gaps, checkpoints, report)
        report.table(
            "condition_gaps",
            gaps.drop(columns="series"),
            "C0 - C1 differences per story (percentage points) at every checkpoint, for truth, "
            "decoy and no-consensus majority (exact McNemar test) and true- and decoy-vote "
            "shares (Wilcoxon signed-rank), with bootstrap 95 % intervals; overall, per "
            "deception type, key-message kind and environment source (hitom, generated).",
        )
    report.table(
        "gap_at_T1",
        rows_frame(metrics.gap_at_T1),
        f"Share of the {last} C0 - C1 gap already present at T1.",
    )
    if metrics.between_models:
        report.table(
            "between_models",
            rows_frame(metrics.between_models),
            "Models compared story by story at the final checkpoint: truth majority per "
            "condition, the C0 - C1 truth gaps, and the decoy-vote effects (C1 - C0 decoy-vote "
            "share per story).",
        )
    _interventions(rates, last, report)
    _observer_trajectory(rates, checkpoints, report)
    if metrics.intervention_contrasts:
        report.table(
            "intervention_contrasts",
            rows_frame(metrics.intervention_contrasts),
            f"Each intervention against its reference, paired by story at {last}: difference "
            "in truth and decoy majority (percentage points), bootstrap 95 % interval, exact "
            "McNemar test.",
        )
    report.table(
        "outcome_rates",
        rates.drop(columns="series"),
        "Every outcome rate with its Wilson 95 % interval.",
    )
    fill_lineage(metrics.lineage, report)


_MEASURE_NAMES = {
    "truth_majority": "truth majority",
    "decoy_majority": "decoy majority",
    "no_consensus": "no consensus",
    "true_vote_share": "true-vote share",
    "decoy_vote_share": "decoy-vote share",
}


def _gap_figures(gaps: pd.DataFrame, checkpoints: list[str], report: Report) -> None:
    """Per model: every paired C0 - C1 measure over the checkpoints, with its interval."""
    overall = gaps[gaps["split"] == "all"].dropna(subset=["estimate_pp"])
    if overall.empty:
        return
    order = {label: i for i, label in enumerate(checkpoints)}
    report.section(
        "Paired C0 - C1 differences",
        "Per story, C0 minus C1, at every checkpoint: majorities and vote shares of the "
        "analysed four, in percentage points, with bootstrap 95 % intervals (n = stories).",
    )
    for model, group in overall.groupby("series", sort=True):
        frame = group.assign(
            step=group["checkpoint"].map(order), line=group["measure"].map(_MEASURE_NAMES)
        ).sort_values("step")
        fig = line_over_rounds(
            frame,
            "step",
            "estimate_pp",
            "line",
            title=f"C0 - C1 by checkpoint ({model})",
            ylabel="percentage points",
            band_low="low_pp",
            band_high="high_pp",
        )
        axes = fig.axes[0]
        axes.set_xticks(range(len(checkpoints)), checkpoints)
        axes.set_xlabel("checkpoint")
        report.figure(fig, f"Paired C0 - C1 differences of every measure, {model}.")


def _observer_trajectory(rates: pd.DataFrame, checkpoints: list[str], report: Report) -> None:
    """Observer arms: the truth and decoy majority of participants (3 of 4), observers (2 of 3)
    and all seven (4 of 7) at every checkpoint from T1 on."""
    arms = rates[rates["intervention"].isin(["passive_observers", "active_observers"])]
    if arms.empty or "observers" not in set(arms["group"]):
        return
    order = {label: i for i, label in enumerate(checkpoints)}
    arms = arms[arms["checkpoint"].isin(checkpoints[1:])]
    report.section(
        "Observer trajectory",
        "In the observer arms, the outcomes of participants (3 of 4), observers (2 of 3) and "
        "all seven (4 of 7) at every checkpoint from T1 on; Wilson 95 % bands.",
    )
    for (model, condition, intervention), group in arms.groupby(
        ["series", "condition", "intervention"], sort=True
    ):
        for outcome in ("truth majority", "decoy majority"):
            frame = group[group["outcome"] == outcome]
            frame = frame.assign(step=frame["checkpoint"].map(order)).sort_values("step")
            fig = line_over_rounds(
                frame,
                "step",
                "rate",
                "group",
                title=f"{outcome} ({model}, {condition} {intervention})",
                ylabel="share of runs",
                band_low="low",
                band_high="high",
            )
            axes = fig.axes[0]
            axes.set_xticks(range(1, len(checkpoints)), checkpoints[1:])
            axes.set_xlabel("checkpoint")
            report.figure(fig, f"{outcome} by group, {condition} {intervention}, {model}.")


def _interventions(rates: pd.DataFrame, last: str, report: Report) -> None:
    """Exits and observers next to C0 and C1: participants, observers and all seven."""
    final = rates[rates["checkpoint"].isin([last, f"O{last[1:]}"])]
    if final["intervention"].nunique() < 2 and final["group"].nunique() < 2:
        return
    report.section(
        "Exits and observers",
        f"Outcomes at {last} for every condition and intervention; observers' own majority "
        "(2 of 3) and the majority of all seven (4 of 7) beside the participants' (3 of 4).",
    )
    for model, group in final.groupby("series", sort=True):
        arms = group["intervention"].map(_ARM_NAMES)
        frame = group.assign(arm=(group["condition"] + " " + arms).str.strip())
        participants = frame[frame["group"] == "participants"]
        fig = bar_with_intervals(
            participants,
            "arm",
            "rate",
            "low",
            "high",
            "outcome",
            title=f"participants' outcomes at {last} ({model})",
            ylabel="share of runs",
        )
        fig.axes[0].tick_params(axis="x", labelrotation=25)
        report.figure(fig, f"Each outcome per condition and intervention, {model}.")
        truth = frame[frame["outcome"] == "truth majority"]
        if truth["group"].nunique() > 1:
            fig = bar_with_intervals(
                truth,
                "arm",
                "rate",
                "low",
                "high",
                "group",
                title=f"truth majority by group ({model})",
                ylabel="share of runs",
            )
            fig.axes[0].tick_params(axis="x", labelrotation=25)
            report.figure(fig, f"Truth majority of participants, observers and all, {model}.")
