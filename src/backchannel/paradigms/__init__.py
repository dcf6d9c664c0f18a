"""Experiment paradigms: discussion, peer pressure, dyad opinion dynamics, policy council.

A paradigm's view (what the transcript viewer draws for it) is built from the `View` types
exported here; they import no web server.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm, is_model_key
    from backchannel.paradigms._items import ItemList, SkippedItem, skipped_of
    from backchannel.paradigms._kit import kit_sections, with_kit_sections
    from backchannel.paradigms._registry import (
        ENTRY_POINT_GROUP,
        PARADIGMS,
        get_paradigm,
        registered,
    )
    from backchannel.paradigms._validity import (
        ValiditySettings,
        ask_awareness,
        awareness_calls,
        judge_awareness,
    )
    from backchannel.paradigms._view import (
        Cell,
        Chip,
        Choice,
        Column,
        EventRef,
        Graph,
        GraphEdge,
        GraphNode,
        Legend,
        Page,
        Plot,
        Prose,
        Row,
        Series,
        Switch,
        Table,
        TableRow,
        Text,
        Timeline,
        View,
        ViewOptions,
        as_json,
    )

__all__ = [
    "ENTRY_POINT_GROUP",
    "PARADIGMS",
    "AnalysisOptions",
    "CallEstimate",
    "Cell",
    "Chip",
    "Choice",
    "Column",
    "EventRef",
    "Graph",
    "GraphEdge",
    "GraphNode",
    "ItemList",
    "Legend",
    "Page",
    "Paradigm",
    "Plot",
    "Prose",
    "Row",
    "Series",
    "SkippedItem",
    "Switch",
    "Table",
    "TableRow",
    "Text",
    "Timeline",
    "ValiditySettings",
    "View",
    "ViewOptions",
    "as_json",
    "ask_awareness",
    "awareness_calls",
    "get_paradigm",
    "is_model_key",
    "judge_awareness",
    "kit_sections",
    "registered",
    "skipped_of",
    "with_kit_sections",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._base": ("AnalysisOptions", "CallEstimate", "Paradigm", "is_model_key"),
            "._items": ("ItemList", "SkippedItem", "skipped_of"),
            "._kit": ("kit_sections", "with_kit_sections"),
            "._registry": ("ENTRY_POINT_GROUP", "PARADIGMS", "get_paradigm", "registered"),
            "._validity": (
                "ValiditySettings",
                "ask_awareness",
                "awareness_calls",
                "judge_awareness",
            ),
            "._view": (
                "Cell",
                "Chip",
                "Choice",
                "Column",
                "EventRef",
                "Graph",
                "GraphEdge",
                "GraphNode",
                "Legend",
                "Page",
                "Plot",
                "Prose",
                "Row",
                "Series",
                "Switch",
                "Table",
                "TableRow",
                "Text",
                "Timeline",
                "View",
                "ViewOptions",
                "as_json",
            ),
        },
    )
