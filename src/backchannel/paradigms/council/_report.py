"""The council's HTML report: per scenario and state, concentration, margin, entropy, winners,
tension classes and verification scores per value, then the between-state tests."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.council._tension import TensionClass
from backchannel.report import Report, bar_with_intervals, stacked_bars

_KEYS = ["scenario", "delphi", "state"]


def _interval_columns(group: dict[str, Any], name: str) -> dict[str, Any]:
    interval = group.get(name) or {}
    return {
        name: interval.get("estimate"),
        f"{name}_low": interval.get("low"),
        f"{name}_high": interval.get("high"),
    }


def summary_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """One row per scenario, Delphi variant and state with the headline measures."""
    rows = []
    for g in metrics["groups"]:
        tension = g.get("tension") or {}
        row = {k: g[k] for k in _KEYS}
        row["deliberations"] = g["deliberations"]
        for name in ("fcc", "margin", "entropy_bits"):
            row.update(_interval_columns(g, name))
        row["credible_tension_rate"] = tension.get("credible_tension_rate")
        row["voice_authenticity_rate"] = g.get("voice_authenticity_rate")
        row["invalid_rankings"] = g["invalid_rankings"]
        row["failed_scores"] = g["failed_scores"]
        if "revisions" in g:
            row["vote_changes"] = g["revisions"]["vote_changes_total"]
            row["fcc_revised"] = g["revisions"]["fcc_revised"].get("estimate")
            row["invalid_revisions"] = g["revisions"]["invalid_revisions"]
        rows.append(row)
    return pd.DataFrame(rows)


def winner_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """Winner counts per option (and ties) for every scenario, Delphi variant and state."""
    rows = [
        {**{k: g[k] for k in _KEYS}, "winner": option, "deliberations": count}
        for g in metrics["groups"]
        for option, count in g["winner_distribution"].items()
    ]
    return pd.DataFrame(rows, columns=[*_KEYS, "winner", "deliberations"])


def borda_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """Per-option Borda points summed (and averaged) over the deliberations of each group."""
    rows = [
        {**{k: g[k] for k in _KEYS}, "option": option, **points}
        for g in metrics["groups"]
        for option, points in g.get("borda_totals", {}).items()
    ]
    return pd.DataFrame(rows, columns=[*_KEYS, "option", "total", "mean", "n"])


def tension_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """Evaluator pairs per tension class (A and B; C shares B's pairs)."""
    rows = []
    for g in metrics["groups"]:
        if g["state"] == "C" or "tension" not in g:
            continue
        counts = g["tension"]["counts"]
        total = sum(counts.values())
        row = {k: g[k] for k in _KEYS}
        for cls in TensionClass:
            row[cls.value] = counts[cls.value]
            row[f"{cls.value}_share"] = counts[cls.value] / total if total else None
        rows.append(row)
    return pd.DataFrame(rows)


def consistency_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """Mean verification score per value."""
    rows = [
        {**{k: g[k] for k in _KEYS}, "value": value, "mean_score": score}
        for g in metrics["groups"]
        if g["state"] != "C"
        for value, score in g.get("consistency_per_value", {}).items()
    ]
    return pd.DataFrame(rows, columns=[*_KEYS, "value", "mean_score"])


def tests_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for t in metrics["tests"]:
        effect = t.get("rank_biserial") or {}
        rows.append(
            {
                "scenario": t["scenario"],
                "delphi": t["delphi"],
                "measure": t["measure"],
                "comparison": t["comparison"],
                "primary": t["primary"],
                "test": t["test"],
                "alternative": t["alternative"],
                "statistic": t.get("statistic"),
                "p_value": t.get("p_value"),
                "p_bonferroni": t.get("p_adjusted"),
                "n": t.get("n"),
                "rank_biserial": effect.get("estimate"),
                "rank_biserial_low": effect.get("low"),
                "rank_biserial_high": effect.get("high"),
                "skipped": t.get("skipped"),
            }
        )
    return pd.DataFrame(rows)


def _cols(name: str) -> list[str]:
    return [name, f"{name}_low", f"{name}_high"]


def _wide(frame: pd.DataFrame, column: str, value: str, fill: float | None = None) -> pd.DataFrame:
    """One row per scenario, Delphi variant and state, one column per level of `column`."""
    if frame.empty:
        return frame
    wide = frame.pivot_table(index=_KEYS, columns=column, values=value, aggfunc="first")
    if fill is not None:
        wide = wide.fillna(fill).astype(int)
    wide.columns.name = None
    return wide.reset_index()


def build_report(tables: RunTables, metrics: dict[str, Any], report: Report) -> None:
    """Fill `report` from the metrics of `council_metrics`."""
    threshold = metrics["threshold"]
    report.text(
        "A: one model for every role. B: one model per role from a pool. C: B's rankings with "
        "every evaluator's Borda points multiplied by its verification score (same conversations)."
    )
    report.metrics({f"conversations_{k}": v for k, v in metrics["conversations"].items()})
    profiling = metrics.get("profiling") or {}
    if profiling.get("collapsed"):
        report.note(
            f"In {profiling['collapsed']} of {profiling['profiled']} profiled state-B "
            "deliberations one model won every value, so every evaluator ran on the same model: "
            "those deliberations are state A in all but name. Set `profiling_distinct: true` to "
            "give evaluators distinct models."
        )
    summary = summary_frame(metrics)
    if summary.empty:
        report.note("No finished deliberation: nothing to measure.")
        return
    report.section(
        "Concentration and margin",
        "FCC = (largest first-choice share - 1/m) / (1 - 1/m): 0 for an even split, 1 when all "
        "agree. Margin: winner's Borda minus runner-up's over the maximum possible score. "
        "Effective perspectives: entropy in bits of the first-choice votes.",
    )
    intervals = [c for c in summary.columns if c.endswith(("_low", "_high"))]
    report.table(
        "summary",
        summary.drop(columns=intervals),
        caption="Per scenario, Delphi variant and state: means over deliberations, pooled rates",
    )
    report.table(
        "intervals",
        summary[[*_KEYS, *(c for n in ("fcc", "margin", "entropy_bits") for c in _cols(n))]],
        caption="95% bootstrap intervals of the means over deliberations",
    )
    plotted = summary.dropna(subset=["fcc", "fcc_low", "fcc_high"])
    plotted = plotted[plotted["delphi"] == "none"]
    if not plotted.empty:
        report.figure(
            bar_with_intervals(
                plotted,
                "scenario",
                "fcc",
                "fcc_low",
                "fcc_high",
                hue="state",
                title="First-choice concentration",
                ylabel="FCC",
            ),
            caption="Mean FCC per scenario and state (95% bootstrap intervals).",
        )
    report.section("Winners")
    from backchannel.paradigms.council._figures import (
        score_figure,
        vote_change_figure,
        winner_figure,
    )

    winners = winner_figure(metrics)
    if winners is not None:
        report.figure(winners, "Share of deliberations each option won, per scenario and state.")
    report.table(
        "winners",
        _wide(winner_frame(metrics), "winner", "deliberations", fill=0),
        caption="Deliberations won per option (Borda winner); 'tie' when the top scores are equal",
    )
    report.table(
        "borda_totals",
        borda_frame(metrics),
        caption="Borda points per option, summed over the group's deliberations (mean: per "
        "deliberation; n: deliberations with a tally). State C weights each evaluator's points "
        "by its verification score.",
    )
    tension = tension_frame(metrics)
    report.section(
        "Tension classes",
        f"Pairs of evaluators holding the two values of a theoretical tension pair. Faithful: "
        f"verification score >= {threshold}. Credible = genuine disagreement + genuine agreement.",
    )
    if tension.empty:
        report.note("No tension pair could be classified.")
    else:
        counts = [c.value for c in TensionClass]
        report.table(
            "tension",
            tension[[*_KEYS, *counts]],
            caption="Evaluator pairs per class (state C shares B's pairs); shares in the figure",
        )
        shares = [f"{c.value}_share" for c in TensionClass]
        plotted_t = tension[tension["delphi"] == "none"].dropna(subset=shares)
        if not plotted_t.empty:
            labelled = plotted_t.assign(cell=plotted_t["scenario"] + " " + plotted_t["state"])
            report.figure(
                stacked_bars(
                    labelled, "cell", shares, title="Tension classes", ylabel="share of pairs"
                ),
                caption="Share of evaluator pairs per class, per scenario and state.",
            )
    consistency = consistency_frame(metrics)
    report.section("Verification scores per value")
    if consistency.empty:
        report.note("No verification scores (verification off, or every call failed).")
    else:
        scores = score_figure(tables)
        if scores is not None:
            report.figure(
                scores,
                "Mean verification score per value and state (95% t intervals over evaluators).",
            )
        report.table(
            "consistency",
            _wide(consistency, "value", "mean_score"),
            caption="Mean verification score per value (state C shares B's scores)",
        )
    changes = vote_change_figure(tables)
    if changes is not None:
        report.section("Delphi vote changes")
        report.figure(
            changes,
            "First choices changed in a Delphi round, per deliberation (95% t intervals).",
        )
    tests = tests_frame(metrics)
    if not tests.empty:
        report.section(
            "Between-state tests",
            "A vs B: one-sided Mann-Whitney U; B vs C: one-sided Wilcoxon signed-rank; effects "
            "are rank-biserial correlations with 10,000-resample bootstrap intervals. The FCC A vs "
            "B test is primary; the others are Bonferroni-adjusted.",
        )
        report.table("tests", tests)
