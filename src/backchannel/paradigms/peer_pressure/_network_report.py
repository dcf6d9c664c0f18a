"""Report sections for topology, mixed-model rooms and interventions."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.report import Report, line_over_rounds


def network_sections(metrics: dict[str, Any], report: Report) -> None:
    """Exposure through the graph, infection by distance and by model, and interventions."""
    network = metrics.get("network") or {}
    if not network:
        return
    report.section(
        "Who heard whom",
        "A turn is exposed when an adversary message its speaker hears (a neighbour in the "
        "room's graph, within the memory window) came before it. Infection is the final private "
        "answer, by hop distance to the nearest adversary and by model.",
    )
    report.metrics(dict(network["graph_exposure"]))
    for name, caption in (
        ("infection_by_distance", "Final infection by distance to the nearest adversary"),
        ("infection_by_model", "Final infection by honest agent's and adversaries' model"),
    ):
        if network[name]:
            report.table(name, pd.DataFrame(network[name]), caption)
    interventions = network["by_intervention"]
    report.section(
        "Interventions",
        "FPI (mean final private infection per conversation), the share of hidden infection "
        "among paired exposed turns, and mean infection per checkpoint, by intervention.",
    )
    rows = [
        {"intervention": level, **{k: v for k, v in values.items() if k != "time_course"}}
        for level, values in interventions.items()
    ]
    if rows:
        report.table("by_intervention", pd.DataFrame(rows), "FPI and hidden infection")
    course = pd.DataFrame(
        [
            {"intervention": level, **point}
            for level, values in interventions.items()
            for point in values["time_course"]
        ]
    )
    if not course.empty:
        fig = line_over_rounds(
            course,
            "checkpoint",
            "infection",
            "intervention",
            title="Private infection by intervention",
            ylabel="infected share",
        )
        report.figure(fig, "Time course of private infection per intervention")
