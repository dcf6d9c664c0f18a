"""Self-contained HTML reports with tables, figures and metrics, plus shared figure helpers."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
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

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._figures": ("bar_with_intervals", "line_over_rounds", "stacked_bars"),
            "._format": ("format_scalar", "is_proportion_name"),
            "._html": ("Report",),
        },
    )
