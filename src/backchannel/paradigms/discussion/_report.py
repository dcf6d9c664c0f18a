"""The discussion paradigm's report: read from its typed results."""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.discussion._metrics import conversation_figures
from backchannel.paradigms.discussion._results import DiscussionMetrics, Interval
from backchannel.report import Report


def build_report(tables: RunTables, metrics: DiscussionMetrics, report: Report) -> None:
    report.section(
        "Private answers",
        "How often agents' private answers changed between the first and the last checkpoint, "
        "and how far the group agreed at the end, per cell of the design.",
    )
    report.metrics({"conversations": metrics.conversations, "failed_probes": metrics.failed_probes})
    cells = [
        {
            **row.cell,
            "conversations": row.conversations,
            **_columns("answer_change_rate", row.answer_change_rate),
            **_columns("final_agreement", row.final_agreement),
            "failed_probes": row.failed_probes,
        }
        for row in metrics.by_cell
    ]
    report.table("cells", pd.DataFrame(cells), "One row per cell of the design.")
    report.table("conversations", conversation_figures(tables), "One row per conversation.")
    probes = tables.events[(tables.events["kind"] == "probe")][
        ["conversation_id", "round", "agent", "text", "status"]
    ]
    report.table("private_answers", pd.DataFrame(probes), "Every private answer.")


def _columns(name: str, interval: Interval) -> dict[str, object]:
    """An interval as tidy columns: the estimate, its bounds, n and why there is none."""
    return {
        name: interval.estimate,
        f"{name}_low": interval.low,
        f"{name}_high": interval.high,
        f"{name}_n": interval.n,
        f"{name}_skipped": interval.skipped,
    }
