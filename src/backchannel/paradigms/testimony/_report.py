"""The testimony report: outcomes by checkpoint per condition, C0 vs C1 per deception type,
exits and observers side by side, and the paired tests."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._lineage_report import fill_lineage
from backchannel.paradigms.testimony._metrics import OUTCOMES, checkpoint_outcomes
from backchannel.paradigms.testimony._stats import wilson
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


def rates_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """The outcome rates as a flat table: one row per arm, group, checkpoint and outcome."""
    rows = []
    for entry in metrics["outcome_rates"]:
        for outcome in OUTCOMES:
            rate = entry[outcome]
            rows.append(
                {
                    "model": entry["model"],
                    "condition": entry["condition"],
                    "intervention": entry["intervention"],
                    "group": entry["group"],
                    "checkpoint": entry["checkpoint"],
                    "outcome": _OUTCOME_NAMES[outcome],
                    "runs": entry["runs"],
                    "rate": rate["estimate"],
                    "low": rate["low"],
                    "high": rate["high"],
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "model",
            "condition",
            "intervention",
            "group",
            "checkpoint",
            "outcome",
            "runs",
            "rate",
            "low",
            "high",
        ],
    )


def _by_deception(outcomes: pd.DataFrame, last: str) -> pd.DataFrame:
    """Truth-majority rate at the final checkpoint per model, deception type and condition."""
    rows = outcomes[
        (outcomes["intervention"] == "none")
        & (outcomes["group"] == "participants")
        & (outcomes["checkpoint"] == last)
    ]
    found = []
    for (model, deception, condition), group in rows.groupby(
        ["model", "deception", "condition"], sort=True
    ):
        rate = wilson(int((group["outcome"] == "truth").sum()), len(group))
        found.append(
            {
                "model": model,
                "deception": deception,
                "condition": condition,
                "rate": rate["estimate"],
                "low": rate["low"],
                "high": rate["high"],
            }
        )
    return pd.DataFrame(found, columns=["model", "deception", "condition", "rate", "low", "high"])


def fill_report(tables: RunTables, metrics: dict[str, Any], report: Report) -> None:
    """Add the testimony sections to `report` from the run's tables and its metrics."""
    checkpoints: list[str] = metrics["checkpoints"]
    last = checkpoints[-1]
    report.section(
        "Runs",
        "Outcomes are those of the analysed group: the four story roles other than the key "
        "role, in every condition. A truth majority is at least 3 of the 4 voting the true "
        "endpoint, a decoy majority at least 3 voting l(m-1); anything else is no consensus.",
    )
    report.metrics(
        {
            "conversations": metrics["conversations"],
            "not_done": metrics["not_done"],
            "failed_votes": metrics["failed_votes"],
            "truncated_votes": metrics["truncated_votes"],
        }
    )
    if metrics["failed_votes"]:
        report.note(
            f"{metrics['failed_votes']} votes could not be read; they count as failed votes "
            "(never as an answer) and cannot make a majority."
        )
    if metrics["truncated_votes"]:
        report.note(
            f"{metrics['truncated_votes']} votes were cut off by their token budget "
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
    for model in sorted(main["model"].unique()):
        for outcome in _OUTCOME_NAMES.values():
            group = main[(main["model"] == model) & (main["outcome"] == outcome)]
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
    outcomes = checkpoint_outcomes(tables)
    deception = _by_deception(outcomes, last)
    if not deception.empty:
        report.section(
            "C0 vs C1 by deception type",
            f"Truth-majority rate at {last} per deception type, with Wilson 95 % intervals.",
        )
        for model_level, group in deception.groupby("model", sort=True):
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
    gaps = pd.DataFrame(metrics["condition_gaps"])
    if not gaps.empty:
        _gap_figures(gaps, checkpoints, report)
        report.table(
            "condition_gaps",
            gaps,
            "C0 - C1 differences per story (percentage points) at every checkpoint, for truth, "
            "decoy and no-consensus majority (exact McNemar test) and true- and decoy-vote "
            "shares (Wilcoxon signed-rank), with bootstrap 95 % intervals; overall, per "
            "deception type, key-message kind and environment source (hitom, generated).",
        )
    report.table(
        "gap_at_T1",
        pd.DataFrame(metrics["gap_at_T1"]),
        f"Share of the {last} C0 - C1 gap already present at T1.",
    )
    if metrics["between_models"]:
        report.table(
            "between_models",
            pd.DataFrame(metrics["between_models"]),
            "Models compared story by story at the final checkpoint: truth majority per "
            "condition, the C0 - C1 truth gaps, and the decoy-vote effects (C1 - C0 decoy-vote "
            "share per story).",
        )
    _interventions(rates, last, report)
    _observer_trajectory(rates, checkpoints, report)
    if metrics["intervention_contrasts"]:
        report.table(
            "intervention_contrasts",
            pd.DataFrame(metrics["intervention_contrasts"]),
            f"Each intervention against its reference, paired by story at {last}: difference "
            "in truth and decoy majority (percentage points), bootstrap 95 % interval, exact "
            "McNemar test.",
        )
    report.table("outcome_rates", rates, "Every outcome rate with its Wilson 95 % interval.")
    fill_lineage(metrics, report)


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
    for model, group in overall.groupby("model", sort=True):
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
        ["model", "condition", "intervention"], sort=True
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
    for model, group in final.groupby("model", sort=True):
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
