"""Report sections of the evidence lineage: citation and adoption per testimony, propagation
order by round, the root-state transition diagram, and both-root holders' votes, read from the
typed results (a figure's series is the model and every other factor's level)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from backchannel.analysis import CellRow, rows_frame
from backchannel.paradigms.testimony._cells import ARM_KEYS
from backchannel.paradigms.testimony._results import JudgeLineage, Lineage
from backchannel.paradigms.testimony._roots import STATES
from backchannel.paradigms.testimony._stats import wilson
from backchannel.report import Report, bar_with_intervals, line_over_rounds

_TESTIMONY = {"key": "key", "second_key": "second-key"}
_STATE_NAMES = {
    "none": "none",
    "true_only": "true only",
    "false_only": "false only",
    "both": "both",
}


def _framed(rows: Sequence[CellRow]) -> pd.DataFrame:
    """Typed rows as a table with their `series` (the model and every other factor's level)."""
    frame = rows_frame(rows)
    if frame.empty:
        return frame
    extra = list(dict.fromkeys(k for r in rows for k in r.cell if k not in ARM_KEYS))
    series = [", ".join([str(r.cell.get("model")), *(f"{k}={r.cell.get(k)}" for k in extra)])
              for r in rows]  # fmt: skip
    return frame.assign(series=series)


def pooled_rates(citation: pd.DataFrame | Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Per series, arm and testimony, over R1..RK: citation and adoption shares of the members'
    statements with Wilson 95 % intervals (`citation`: the citation rows; without a `series`,
    the model is the series)."""
    frame = pd.DataFrame(citation) if not isinstance(citation, pd.DataFrame) else citation
    if "series" not in frame.columns:
        frame = frame.assign(series=frame["model"])
    frame = frame[frame["group"] == "members"]
    rows = []
    for (model, condition, intervention, testimony), group in frame.groupby(
        ["series", "condition", "intervention", "testimony"], sort=True
    ):
        n = int(group["statements"].sum())
        arm = condition if intervention == "none" else f"{condition} {intervention}"
        for measure, column in (
            ("citation", "citation_rate"),
            ("adoption", "adoption_rate"),
            ("endpoint support", "endpoint_support_rate"),
        ):
            hits = round(float((group[column].fillna(0) * group["statements"]).sum()))
            rate = wilson(hits, n)
            rows.append(
                {
                    "model": model,
                    "bar": f"{_TESTIMONY[str(testimony)]} {arm}",
                    "measure": measure,
                    "statements": n,
                    "rate": rate["estimate"],
                    "low": rate["low"],
                    "high": rate["high"],
                }
            )
    return pd.DataFrame(
        rows, columns=["model", "bar", "measure", "statements", "rate", "low", "high"]
    )


def transition_figure(rows: list[dict[Any, Any]], title: str) -> Figure:
    """Root states (rows) over rounds (columns); each line is a transition, labelled with its
    count and drawn as wide as its share of members."""
    phases = sorted({r["from_phase"] for r in rows} | {r["to_phase"] for r in rows})
    total = max(sum(r["count"] for r in rows if r["from_phase"] == phases[0]), 1)
    fig = Figure(figsize=(7.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    y = {state: len(STATES) - 1 - i for i, state in enumerate(STATES)}
    x = {phase: i for i, phase in enumerate(phases)}
    for r in rows:
        x0, x1 = x[r["from_phase"]], x[r["to_phase"]]
        y0, y1 = y[r["from_state"]], y[r["to_state"]]
        ax.plot([x0, x1], [y0, y1], color="#4477aa", alpha=0.6, lw=1 + 12 * r["count"] / total)
        ax.annotate(
            str(r["count"]),
            ((x0 + x1) / 2, (y0 + y1) / 2),
            ha="center",
            va="center",
            fontsize=8,
            bbox={"boxstyle": "round", "fc": "white", "ec": "#999999"},
        )
    for phase in phases:
        ax.scatter([x[phase]] * len(STATES), list(y.values()), color="#222222", zorder=3, s=18)
    ax.set_xticks(range(len(phases)), phases)
    ax.set_yticks(list(y.values()), [_STATE_NAMES[s] for s in y])
    ax.set_xlim(-0.3, len(phases) - 0.7)
    ax.set_ylim(-0.5, len(STATES) - 0.5)
    ax.set_xlabel("round")
    ax.set_title(title)
    return fig


def fill_lineage(lineage: Lineage, report: Report) -> None:
    """The lineage sections, one set per citation judge (the markup's first)."""
    if not lineage.judges:
        report.section(
            "Evidence lineage",
            "No statement has extracted claims: run with citation markup, or extract them with "
            "`backchannel judge RUN --judge MODEL --as citations_llm`.",
        )
        return
    for judge in lineage.judges:
        _judge_sections(judge, lineage.by_judge[judge], report)


def _judge_sections(judge: str, found: JudgeLineage, report: Report) -> None:
    summary = found.extraction
    report.section(
        f"Evidence lineage ({judge})",
        "Claims are the citations of the members' public statements (R1..RK; the key and "
        "second-key roles are not analysed). Citation: the statement carries the testimony, "
        "directly or through an earlier statement; adoption (the study's): a claim that carries "
        "the testimony supports the endpoint it supports; endpoint support: any claim supports "
        "that endpoint, whatever it cites (equal for the two testimonies in C0 by "
        "construction). Bars pool R1..RK with Wilson 95 % intervals.",
    )
    report.metrics(
        {
            "statements": summary.statements,
            "claims": summary.claims,
            **{f"statements {k}": v for k, v in summary.by_status.items()},
            **{f"invalid citations: {k}": v for k, v in summary.invalid_citations.items()},
        }
    )
    if not found.citation:
        report.note("No analysed statement: nothing to show.")
        return
    rates = _framed(found.citation)
    pooled = pooled_rates(rates)
    for model, group in pooled.groupby("model", sort=True):
        fig = bar_with_intervals(
            group.fillna({"rate": 0.0, "low": 0.0, "high": 0.0}),
            "bar",
            "rate",
            "low",
            "high",
            "measure",
            title=f"citation, adoption and endpoint support per testimony ({model})",
            ylabel="share of statements",
        )
        fig.axes[0].tick_params(axis="x", labelrotation=25)
        report.figure(fig, f"Citation and adoption of the key and second-key testimony, {model}.")
    members = rates[rates["group"] == "members"].dropna(subset=["mean_order"])
    if not members.empty:
        frame = members.assign(
            step=members["phase"].str[1:].astype(int),
            line=members["testimony"].map(_TESTIMONY) + " " + members["condition"],
        )
        for (name, intervention), group in frame.groupby(["series", "intervention"], sort=True):
            fig = line_over_rounds(
                group,
                "step",
                "mean_order",
                "line",
                title=f"mean propagation order ({name}, {intervention})",
                ylabel="mean order",
            )
            fig.axes[0].set_xlabel("round")
            report.figure(
                fig,
                "Mean propagation order of the statements carrying each testimony, by round: "
                "the true root is the second-key's testimony, the false root the key's in C1.",
            )
    report.table(
        "lineage_citation",
        rates.drop(columns="series"),
        "Every citation measure per testimony and round.",
    )
    _roots(judge, found, report)


def _roots(judge: str, found: JudgeLineage, report: Report) -> None:
    report.section(
        f"Evidence roots ({judge})",
        "A member holds a root in a round when any of its statements so far carries it: the "
        "true root is the second-key's testimony, the false root the key's testimony in C1.",
    )
    moved = _framed(found.transitions)
    if not moved.empty:
        for (model, condition, intervention), group in moved.groupby(
            ["series", "condition", "intervention"], sort=True
        ):
            fig = transition_figure(
                group.to_dict("records"), f"root states ({model}, {condition}, {intervention})"
            )
            report.figure(fig, "Members' root states from round to round, with counts.", data=group)
        report.table(
            "root_transitions",
            moved.drop(columns="series"),
            "State transitions between rounds (counts).",
        )
    if found.pickups:
        report.table(
            "root_pickups",
            rows_frame(found.pickups),
            "Share of true-only holders that hold the false root a round later, and the reverse.",
        )
    if found.both_root_votes:
        report.table(
            "both_root_votes",
            rows_frame(found.both_root_votes),
            "Votes of members holding both roots: true endpoint, decoy, UNKNOWN, other, failed.",
        )
    if found.single_root_order:
        report.table(
            "single_root_order",
            rows_frame(found.single_root_order),
            "Mean propagation order at which single-root holders hold their root, by round.",
        )
    report.table("root_states", rows_frame(found.root_states), "Members per root state.")
