"""The discussion paradigm's report."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import Interval, RunTables
from backchannel.paradigms.discussion._metrics import conversation_figures
from backchannel.report import Report


def build_report(tables: RunTables, metrics: dict[str, Any], report: Report) -> None:
    report.section(
        "Private answers",
        "How often agents' private answers changed between the first and the last checkpoint, "
        "and how far the group agreed at the end.",
    )
    summary: dict[str, object] = {
        key: Interval(**value)  # shown as estimate [low, high] (n=...), or why there is none
        for key, value in metrics.items()
        if isinstance(value, dict) and "estimate" in value
    }
    summary["conversations"] = metrics["conversations"]
    summary["failed_probes"] = metrics["failed_probes"]
    report.metrics(summary)
    report.table("conversations", conversation_figures(tables), "One row per conversation.")
    probes = tables.events[(tables.events["kind"] == "probe")][
        ["conversation_id", "round", "agent", "text", "status"]
    ]
    report.table("private_answers", pd.DataFrame(probes), "Every private answer.")
