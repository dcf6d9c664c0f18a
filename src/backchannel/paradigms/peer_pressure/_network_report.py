"""Report sections for topology, mixed-model rooms and interventions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from backchannel.analysis import rows_frame
from backchannel.report import Report, line_over_rounds

if TYPE_CHECKING:
    from backchannel.paradigms.peer_pressure._results import PeerPressureMetrics


def _cell_label(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """`a=1, b=x` from the columns that vary in `frame` (`all` when none does)."""
    varying = [c for c in columns if frame[c].nunique(dropna=False) > 1]
    if not varying:
        return pd.Series("all", index=frame.index)
    return (
        frame[varying]
        .astype(str)
        .apply(lambda row: ", ".join(f"{c}={v}" for c, v in row.items()), axis=1)
    )


def network_sections(metrics: PeerPressureMetrics, report: Report) -> None:
    """Exposure through the graph, infection by distance and by model, and interventions."""
    network = metrics.network
    if not network.graph_exposure:
        return
    report.section(
        "Who heard whom",
        "A turn is exposed when an adversary message its speaker hears (a neighbour in the "
        "room's graph, within the memory window) came before it. Infection is the final private "
        "answer, by hop distance to the nearest adversary and by model, per cell; the split by "
        "the agents' own models replaces the factors that name models.",
    )
    report.table("graph_exposure", rows_frame(network.graph_exposure), "Exposure per cell")
    if network.infection_by_distance:
        report.table(
            "infection_by_distance",
            rows_frame(network.infection_by_distance),
            "Final infection by distance to the nearest adversary",
        )
    if network.infection_by_model:
        report.table(
            "infection_by_model",
            rows_frame(network.infection_by_model),
            "Final infection by honest agent's and adversaries' model",
        )
    report.section(
        "Interventions",
        "FPI (mean final private infection per conversation), the share of hidden infection "
        "among paired exposed turns, and mean infection per checkpoint, by intervention in "
        "each cell.",
    )
    rows = network.by_intervention
    table = rows_frame(rows).drop(columns="time_course", errors="ignore")
    if table.empty:
        return
    report.table("by_intervention", table, "FPI and hidden infection")
    if table["intervention"].nunique(dropna=False) < 2:
        return  # one intervention: its time course is the one under "Infection over rounds"
    others = [c for c in table.columns if c in metrics.cell_factors and c != "intervention"]
    cells = _cell_label(table[others], others).tolist()
    course = pd.DataFrame(
        [
            {"cell": cell, "intervention": row.cell["intervention"], **point.model_dump()}
            for cell, row in zip(cells, rows, strict=True)
            for point in row.time_course
        ]
    )
    if course.empty:
        return
    fig = line_over_rounds(
        course,
        "checkpoint",
        "infection",
        "intervention",
        title="Private infection by intervention",
        ylabel="infected share",
        facet="cell" if course["cell"].nunique() > 1 else None,
    )
    report.figure(
        fig,
        "Time course of private infection per intervention (a panel per cell of the other factors)",
    )
