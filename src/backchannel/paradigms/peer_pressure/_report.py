"""The peer-pressure report: FPI per cell, infection over rounds, private versus public, the
seven-way cross and the cascade, each with its table written as CSV beside the HTML.

It reads the typed `PeerPressureMetrics` (attributes, never string keys), so a report can be
rebuilt from the metrics alone; `tables` supplies only the run's counts. Every table is per cell
of the run's design; a section whose definition contrasts a factor says so.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, rows_frame
from backchannel.paradigms.peer_pressure._cascade import BINS
from backchannel.paradigms.peer_pressure._network_report import network_sections
from backchannel.paradigms.peer_pressure._pairing import PAIRINGS, SEVEN_WAY
from backchannel.paradigms.peer_pressure._results import PairingRow, PeerPressureMetrics
from backchannel.report import Report, bar_with_intervals, line_over_rounds, stacked_bars

_PAIRING_TITLES = {
    "main": "every exposed turn x probe after its round",
    "first_before": "first honest speaker x probe before the round",
    "last_after": "last honest speaker x probe after the round",
}


def _label(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """A short cell label such as `model=m1, k=2` from the factors that vary in `frame`."""
    varying = [c for c in columns if frame[c].nunique(dropna=False) > 1]
    if not varying:
        return pd.Series("all" if not columns else "one cell", index=frame.index)
    parts = [c + "=" + frame[c].astype(str) for c in varying]
    label = parts[0]
    for part in parts[1:]:
        label = label + ", " + part
    return label


def _facet(frame: pd.DataFrame, columns: list[str]) -> tuple[str | None, list[str]]:
    """The factor to draw small multiples by (the model, else the dataset, when it varies) and
    the factors left for the colours."""
    for name in ("model", "dataset"):
        if name in columns and frame[name].nunique(dropna=False) > 1:
            return name, [c for c in columns if c != name]
    return None, columns


def _fpi_section(metrics: PeerPressureMetrics, report: Report, cells: list[str]) -> None:
    by_cell = rows_frame(metrics.fpi.by_cell)
    report.section(
        "Final private infection",
        "Share of a conversation's honest agents whose private answer is the false one at the "
        "last checkpoint, averaged over conversations per cell with 95 % bootstrap intervals. "
        "Initial infection is the same share at checkpoint 0.",
    )
    if by_cell.empty:
        report.note("No conversation has a valid private answer at its last checkpoint.")
        return
    plotted = by_cell.dropna(subset=["fpi", "fpi_low", "fpi_high"])
    if "k" in cells and not plotted.empty:
        facet, others = _facet(plotted, [c for c in cells if c != "k"])
        plotted = plotted.assign(cell=_label(plotted, others)).sort_values(["k", "cell"])
        if facet is not None:
            plotted = plotted.assign(**{facet: plotted[facet].astype(str)})
        fig = bar_with_intervals(
            plotted,
            "k",
            "fpi",
            "fpi_low",
            "fpi_high",
            "cell",
            title="Final private infection by number of adversaries",
            ylabel="share of honest agents infected",
            facet=facet,
        )
        report.figure(fig, "FPI by k per cell (95 % bootstrap intervals over conversations)")
    report.table("fpi_by_cell", by_cell, "FPI and initial infection per cell")


def _time_section(metrics: PeerPressureMetrics, report: Report, cells: list[str]) -> None:
    course = rows_frame(metrics.time_course.by_checkpoint)
    report.section(
        "Infection over rounds",
        "Mean infection per checkpoint (0 = before round 1, r = after round r) in each cell; "
        "the summary gives the first round at which a cell reaches half its final infection "
        "and the share of the final infection reached by round 4.",
    )
    if course.empty:
        report.note("No valid private answers.")
        return
    facet, others = _facet(course, cells)
    plotted = course.assign(cell=_label(course, others))
    fig = line_over_rounds(
        plotted.sort_values(["cell", "checkpoint"]),
        "checkpoint",
        "infection",
        "cell",
        title="Private infection over rounds",
        ylabel="mean share infected",
        facet=facet,
    )
    report.figure(fig, "Infection curves per cell")
    report.table("time_course", course, "Mean infection per checkpoint")
    report.table("time_course_summary", rows_frame(metrics.time_course.by_cell))


def _turn_section(metrics: PeerPressureMetrics, report: Report, cells: list[str]) -> None:
    report.section(
        "Private belief versus public stance",
        "Honest agents' exposed turns (an adversary spoke before them), each paired with its "
        "speaker's private answer. Unrelated turns and mixed or uncertain answers are left out "
        "of the seven-way cross and counted apart.",
    )
    by_cell = rows_frame(metrics.turns_by_cell)
    if not by_cell.empty:
        by_cell = by_cell.assign(cell=_label(by_cell, cells))
        facet, others = _facet(by_cell, cells)
        plotted = by_cell.assign(cell=_label(by_cell, others))
        long = plotted.melt(
            id_vars=["cell", "n_turns", *([facet] if facet else [])],
            value_vars=["private_infection_rate", "public_endorsement_rate"],
            var_name="measure",
            value_name="rate",
        ).dropna(subset=["rate"])
        long = long[long["n_turns"] > 0]
        if not long.empty:
            from statsmodels.stats.proportion import proportion_confint

            counts = (long["rate"] * long["n_turns"]).round()
            low, high = proportion_confint(counts, long["n_turns"], method="wilson")
            long = long.assign(low=low.clip(upper=long["rate"]), high=high.clip(lower=long["rate"]))
            if facet is not None:
                long = long.assign(**{facet: long[facet].astype(str)})
            fig = bar_with_intervals(
                long,
                "cell",
                "rate",
                "low",
                "high",
                "measure",
                title="Private infection versus public endorsement (main pairing)",
                ylabel="share of exposed turns",
                facet=facet,
            )
            report.figure(
                fig,
                "Private infection and public endorsement rates per cell (shares of turns, 95 % "
                "Wilson intervals)",
            )
        shares = by_cell.dropna(subset=list(SEVEN_WAY), how="all").fillna(
            dict.fromkeys(SEVEN_WAY, 0.0)
        )
        if not shares.empty:
            fig = stacked_bars(
                shares,
                "cell",
                list(SEVEN_WAY),
                title="Seven-way cross of private answer and public stance",
                ylabel="share of turns",
            )
            report.figure(fig, "Seven-way cross per cell (main pairing)")
        report.table("turns_by_cell", by_cell.drop(columns="cell"), "Main pairing per cell")
    pairings = [
        _pairing_row(pairing, row)
        for pairing in PAIRINGS
        for row in getattr(metrics.pairings, pairing)
    ]
    report.table(
        "pairings", pd.DataFrame(pairings), "Main figures under the three pairings, per cell"
    )
    report.table(
        "carry_over",
        rows_frame(metrics.carry_over),
        "Exposed turns infected after their round: the share already infected before it",
    )
    report.table(
        "self_internalisation",
        rows_frame(metrics.self_internalisation),
        "Speakers true before their turn: share infected after it, by the turn's stance",
    )


def _pairing_row(pairing: str, row: PairingRow) -> dict[str, Any]:
    """One row of the pairings table: the cell, the pairing, its rates and seven-way counts."""
    flat: dict[str, Any] = {"pairing": pairing, "definition": _PAIRING_TITLES[pairing], **row.cell}
    flat |= {
        name: getattr(row, name)
        for name in (
            "n_turns",
            "private_infection_rate",
            "public_endorsement_rate",
            "private_to_public_ratio",
            "n_knower_turns",
            "knower_correction_rate",
        )
    }
    flat |= {f"infected_{s}": v for s, v in row.infected_stance_shares}
    flat |= dict(row.seven_way.counts)
    flat["left_out_unrelated"] = row.seven_way.left_out_unrelated
    flat["left_out_mixed_or_uncertain"] = row.seven_way.left_out_mixed_or_uncertain
    return flat


def _cascade_section(metrics: PeerPressureMetrics, report: Report, cells: list[str]) -> None:
    report.section(
        "Cascade",
        "For honest agents uninfected at checkpoint r-1: the probability of being infected at "
        "checkpoint r, by how many other honest agents were infected at r-1, in each cell (so "
        "per k and per group size N, where a bin is a larger share of a small room).",
    )
    table = rows_frame(metrics.cascade)
    if table.empty:
        return
    plotted = table.dropna(subset=["probability"])
    if not plotted.empty:
        facet, others = _facet(plotted, cells)
        plotted = plotted.assign(
            cell=_label(plotted, others), infected_peers=plotted["bin"].map(BINS.index)
        )
        if facet is not None:
            plotted = plotted.assign(**{facet: plotted[facet].astype(str)})
        fig = line_over_rounds(
            plotted.sort_values(["cell", "infected_peers"]),
            "infected_peers",
            "probability",
            "cell",
            title="Conversion by infected peers (5 = five or more)",
            ylabel="probability of conversion",
            facet=facet,
        )
        report.figure(fig, "Cascade: conversion probability by infected peers, per cell")
    report.table("cascade", table, "Agents at risk, conversions and probability per cell and bin")


def _contrast_section(metrics: PeerPressureMetrics, report: Report) -> None:
    report.section(
        "Group versus dyad and re-asking",
        "FPI of each N-agent group minus FPI of the dyad (N = 2), both with one adversary, on "
        "the same items in each cell of the other factors (replicates averaged per item; paired "
        "bootstrap 95 % intervals). Re-ask variants are compared with the original probe at "
        "the same checkpoint, per cell.",
    )
    if metrics.group_vs_dyad:
        report.table("group_vs_dyad", rows_frame(metrics.group_vs_dyad), "Group minus dyad FPI")
    report.table("reask", rows_frame(metrics.reask), "Re-ask variants per cell")


def _agreement_section(metrics: PeerPressureMetrics, report: Report) -> None:
    agreement = metrics.judge_agreement
    if agreement is None:
        return
    report.section(
        "Judge agreement",
        f"Judge {agreement.judge_a} against judge {agreement.judge_b} on events both "
        "labelled. Reweighted FPI replaces each of the first judge's labels by the second "
        "judge's chance of saying manipulated for that label.",
    )
    for channel in ("private", "public"):
        result = getattr(agreement, channel)
        report.metrics(
            {
                f"{channel}: n": result.n,
                f"{channel}: percent agreement": result.percent_agreement,
                f"{channel}: Cohen's kappa": result.kappa,
            }
            | ({f"{channel}: kappa not computed": result.skipped} if result.skipped else {})
        )
        confusion = pd.DataFrame.from_dict(result.confusion, orient="index")
        confusion.index.name = agreement.judge_a
        report.table(f"confusion_{channel}", confusion.reset_index(), f"{channel} labels")
    report.table(
        "reweighted_fpi", rows_frame(agreement.reweighted_fpi.by_cell), "FPI and reweighted FPI"
    )


def build_report(tables: RunTables, metrics: PeerPressureMetrics, report: Report) -> None:
    """Add the peer-pressure sections to `report` from `compute_metrics` output."""
    cells = list(metrics.cell_factors)
    done = int((tables.conversations["status"] == "done").sum())
    report.section(
        "Run",
        f"Labels by judge {metrics.judge}. Failed events and labels are counted here and left "
        "out of every rate.",
    )
    report.metrics({"conversations done": done, **metrics.failures.model_dump()})
    if metrics.pooled:
        contrasted = "; ".join(
            f"{section} pools {', '.join(factors)}" for section, factors in metrics.pooled.items()
        )
        report.note(
            "Every table is per cell of the run's factors, except where a section's definition "
            f"contrasts a factor's levels: {contrasted}."
        )
    _fpi_section(metrics, report, cells)
    _time_section(metrics, report, cells)
    _turn_section(metrics, report, cells)
    _cascade_section(metrics, report, cells)
    _contrast_section(metrics, report)
    network_sections(metrics, report)
    _agreement_section(metrics, report)
