"""Self-contained HTML reports with tables, figures and metrics, plus shared figure helpers."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.report._divergence import divergence_section
    from backchannel.report._figures import (
        bar_with_intervals,
        line_over_rounds,
        shared_ylim,
        stacked_bars,
    )
    from backchannel.report._format import format_scalar, is_proportion_name
    from backchannel.report._html import Report
    from backchannel.report._influence import influence_frame, influence_section
    from backchannel.report._links import DEFAULT_VIEWER, ViewerLinks, viewer_links
    from backchannel.report._validity import validity_section

__all__ = [
    "DEFAULT_VIEWER",
    "Report",
    "ViewerLinks",
    "bar_with_intervals",
    "divergence_section",
    "format_scalar",
    "influence_frame",
    "influence_section",
    "is_proportion_name",
    "line_over_rounds",
    "shared_ylim",
    "stacked_bars",
    "validity_section",
    "viewer_links",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._divergence": ("divergence_section",),
            "._figures": ("bar_with_intervals", "line_over_rounds", "shared_ylim", "stacked_bars"),
            "._format": ("format_scalar", "is_proportion_name"),
            "._html": ("Report",),
            "._influence": ("influence_frame", "influence_section"),
            "._links": ("DEFAULT_VIEWER", "ViewerLinks", "viewer_links"),
            "._validity": ("validity_section",),
        },
    )
