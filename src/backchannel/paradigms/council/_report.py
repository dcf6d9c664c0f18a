"""The council's HTML report: per scenario and state, concentration, margin, entropy, winners,
tension classes and verification scores per value, then the between-state tests.

Every table leads with the group's scenario and Delphi variant, then its level of each further
factor the run declares (`pool` is the state itself), then the state, so groups of different
cells are never merged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.paradigms.council._cells import cell_factors, shown
from backchannel.paradigms.council._results import CouncilMetrics, Group, Interval
from backchannel.paradigms.council._tension import TensionClass
from backchannel.report import Report, bar_with_intervals, stacked_bars


def _keys(group: Group, factors: Sequence[str]) -> dict[str, Any]:
    cell = group.cell
    return {
        "scenario": cell["scenario"],
        "delphi": cell["delphi"],
        **{f: shown(cell.get(f)) for f in factors},
        "state": group.state,
    }


def _key_columns(factors: Sequence[str]) -> list[str]:
    return ["scenario", "delphi", *factors, "state"]


def _interval_columns(interval: Interval | None, name: str) -> dict[str, Any]:
    return {
        name: interval.estimate if interval else None,
        f"{name}_low": interval.low if interval else None,
        f"{name}_high": interval.high if interval else None,
    }


def summary_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """One row per group with the headline measures."""
    rows = []
    for g in metrics.groups:
        row = _keys(g, factors)
        row["deliberations"] = g.deliberations
        for name in ("fcc", "margin", "entropy_bits"):
            row.update(_interval_columns(getattr(g, name), name))
        row["credible_tension_rate"] = g.tension.credible_tension_rate if g.tension else None
        row["voice_authenticity_rate"] = g.voice_authenticity_rate
        row["invalid_rankings"] = g.invalid_rankings
        row["failed_scores"] = g.failed_scores
        if g.revisions is not None:
            row["vote_changes"] = g.revisions.vote_changes_total
            row["fcc_revised"] = g.revisions.fcc_revised.estimate
            row["invalid_revisions"] = g.revisions.invalid_revisions
        rows.append(row)
    return pd.DataFrame(rows)


def winner_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """Winner counts per option (and ties) for every group."""
    rows = [
        {**_keys(g, factors), "winner": option, "deliberations": count}
        for g in metrics.groups
        for option, count in g.winner_distribution.items()
    ]
    return pd.DataFrame(rows, columns=[*_key_columns(factors), "winner", "deliberations"])


def borda_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """Per-option Borda points summed (and averaged) over the deliberations of each group."""
    rows = [
        {**_keys(g, factors), "option": option, **points.model_dump()}
        for g in metrics.groups
        for option, points in g.borda_totals.items()
    ]
    return pd.DataFrame(rows, columns=[*_key_columns(factors), "option", "total", "mean", "n"])


def tension_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """Evaluator pairs per tension class (A and B; C shares B's pairs)."""
    rows = []
    for g in metrics.groups:
        if g.state == "C" or g.tension is None:
            continue
        counts = g.tension.counts
        total = sum(counts.values())
        row = _keys(g, factors)
        for cls in TensionClass:
            row[cls.value] = counts[cls.value]
            row[f"{cls.value}_share"] = counts[cls.value] / total if total else None
        rows.append(row)
    return pd.DataFrame(rows)


def consistency_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    """Mean verification score per value."""
    rows = [
        {**_keys(g, factors), "value": value, "mean_score": score}
        for g in metrics.groups
        if g.state != "C"
        for value, score in (g.consistency_per_value or {}).items()
    ]
    return pd.DataFrame(rows, columns=[*_key_columns(factors), "value", "mean_score"])


def tests_frame(metrics: CouncilMetrics, factors: Sequence[str] = ()) -> pd.DataFrame:
    rows = []
    for t in metrics.tests:
        effect = t.rank_biserial
        cell = t.cell
        rows.append(
            {
                "scenario": cell["scenario"],
                "delphi": cell["delphi"],
                **{f: shown(cell.get(f)) for f in factors},
                "measure": t.measure,
                "comparison": t.comparison,
                "primary": t.primary,
                "test": t.test,
                "alternative": t.alternative,
                "statistic": t.statistic,
                "p_value": t.p_value,
                "p_bonferroni": t.p_adjusted,
                "n": t.n,
                "rank_biserial": effect.estimate,
                "rank_biserial_low": effect.low,
                "rank_biserial_high": effect.high,
                "skipped": t.skipped,
            }
        )
    return pd.DataFrame(rows)


def _cols(name: str) -> list[str]:
    return [name, f"{name}_low", f"{name}_high"]


def _wide(
    frame: pd.DataFrame,
    column: str,
    value: str,
    factors: Sequence[str] = (),
    fill: float | None = None,
) -> pd.DataFrame:
    """One row per group, one column per level of `column` (in sorted order)."""
    if frame.empty:
        return frame
    keys = _key_columns(factors)
    wide: dict[str, dict[str, Any]] = {}
    for record in frame.to_dict("records"):
        row = wide.setdefault(json.dumps([record[k] for k in keys], default=str), {})
        row.update({k: record[k] for k in keys})
        row[str(record[column])] = record[value]
    levels = sorted({str(v) for v in frame[column]})
    out = pd.DataFrame(list(wide.values()), columns=[*keys, *levels])
    if fill is not None:
        out[levels] = out[levels].fillna(fill).astype(int)
    return out


def _state_levels(metrics: CouncilMetrics, design: Design) -> dict[str, dict[str, Any]]:
    """The pool each state was measured in (C re-tallies B's deliberations), as the viewer
    filters conversations by it; every state stands for the whole cell without a pool factor."""
    if "pool" not in design.factors:
        return {g.state: {} for g in metrics.groups}
    return {g.state: {"pool": g.cell.get("pool")} for g in metrics.groups}


def build_report(tables: RunTables, metrics: CouncilMetrics, report: Report) -> None:
    """Fill `report` from the metrics of `council_metrics`."""
    factors = cell_factors(Design.of(tables))
    report.derive_levels("state", _state_levels(metrics, Design.of(tables)))
    threshold = metrics.threshold
    report.text(
        "A: one model for every role. B: one model per role from a pool. C: B's rankings with "
        "every evaluator's Borda points multiplied by its verification score (same conversations)."
    )
    report.metrics({f"conversations_{k}": v for k, v in metrics.conversations.items()})
    profiling = metrics.profiling
    if profiling.collapsed:
        report.note(
            f"In {profiling.collapsed} of {profiling.profiled} profiled state-B "
            "deliberations one model won every value, so every evaluator ran on the same model: "
            "those deliberations are state A in all but name. Set `profiling_distinct: true` to "
            "give evaluators distinct models."
        )
    if factors:
        report.note(
            f"The run also varies {', '.join(factors)}: every table and figure below is per "
            "level of it, never averaged over its levels."
        )
    summary = summary_frame(metrics, factors)
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
        summary[
            [
                *_key_columns(factors),
                *(c for n in ("fcc", "margin", "entropy_bits") for c in _cols(n)),
            ]
        ],
        caption="95% bootstrap intervals of the means over deliberations",
    )
    plotted = summary.dropna(subset=["fcc", "fcc_low", "fcc_high"])
    plotted = plotted[plotted["delphi"] == "none"]
    if not plotted.empty:
        report.figure(
            bar_with_intervals(
                plotted.assign(scenario=_labels(plotted, factors)),
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
        score_figures,
        vote_change_figure,
        winner_figure,
    )

    winners = winner_figure(metrics, factors)
    if winners is not None:
        report.figure(winners, "Share of deliberations each option won, per scenario and state.")
    report.table(
        "winners",
        _wide(winner_frame(metrics, factors), "winner", "deliberations", factors, fill=0),
        caption="Deliberations won per option (Borda winner); 'tie' when the top scores are equal",
    )
    report.table(
        "borda_totals",
        borda_frame(metrics, factors),
        caption="Borda points per option, summed over the group's deliberations (mean: per "
        "deliberation; n: deliberations with a tally). State C weights each evaluator's points "
        "by its verification score.",
    )
    tension = tension_frame(metrics, factors)
    faithful = threshold if threshold is not None else "the threshold of the group's cell"
    report.section(
        "Tension classes",
        f"Pairs of evaluators holding the two values of a theoretical tension pair. Faithful: "
        f"verification score >= {faithful}. Credible = genuine disagreement + genuine agreement.",
    )
    if tension.empty:
        report.note("No tension pair could be classified.")
    else:
        counts = [c.value for c in TensionClass]
        report.table(
            "tension",
            tension[[*_key_columns(factors), *counts]],
            caption="Evaluator pairs per class (state C shares B's pairs); shares in the figure",
        )
        shares = [f"{c.value}_share" for c in TensionClass]
        plotted_t = tension[tension["delphi"] == "none"].dropna(subset=shares)
        if not plotted_t.empty:
            labelled = plotted_t.assign(
                cell=[
                    f"{label} {state}"
                    for label, state in zip(
                        _labels(plotted_t, factors), plotted_t["state"], strict=True
                    )
                ]
            )
            report.figure(
                stacked_bars(
                    labelled, "cell", shares, title="Tension classes", ylabel="share of pairs"
                ),
                caption="Share of evaluator pairs per class, per scenario and state.",
            )
    consistency = consistency_frame(metrics, factors)
    report.section("Verification scores per value")
    if consistency.empty:
        report.note("No verification scores (verification off, or every call failed).")
    else:
        for label, scores in score_figures(tables):
            report.figure(
                scores,
                "Mean verification score per value and state (95% t intervals over evaluators)"
                + (f": {label}." if label else "."),
            )
        report.table(
            "consistency",
            _wide(consistency, "value", "mean_score", factors),
            caption="Mean verification score per value (state C shares B's scores)",
        )
    changes = vote_change_figure(tables)
    if changes is not None:
        report.section("Delphi vote changes")
        report.figure(
            changes,
            "First choices changed in a Delphi round, per deliberation (95% t intervals).",
        )
    tests = tests_frame(metrics, factors)
    if not tests.empty:
        report.section(
            "Between-state tests",
            "A vs B: one-sided Mann-Whitney U; B vs C: one-sided Wilcoxon signed-rank; effects "
            "are rank-biserial correlations with 10,000-resample bootstrap intervals. The FCC A vs "
            "B test is primary; the others are Bonferroni-adjusted.",
        )
        report.table("tests", tests)


def _labels(frame: pd.DataFrame, factors: Sequence[str]) -> list[str]:
    """`scenario`, with the group's level of each further factor when the run has any."""
    if not factors:
        return [str(v) for v in frame["scenario"]]
    return [
        f"{scenario} (" + ", ".join(f"{f}={v}" for f, v in zip(factors, levels, strict=True)) + ")"
        for scenario, *levels in zip(frame["scenario"], *(frame[f] for f in factors), strict=True)
    ]
