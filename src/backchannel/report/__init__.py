"""Self-contained HTML reports with tables, figures and metrics, plus shared figure helpers."""

from backchannel.report._figures import bar_with_intervals, line_over_rounds, stacked_bars
from backchannel.report._format import format_scalar, is_proportion_name
from backchannel.report._html import Report

__all__ = [
    "Report",
    "bar_with_intervals",
    "format_scalar",
    "is_proportion_name",
    "line_over_rounds",
    "stacked_bars",
]
