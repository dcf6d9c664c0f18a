"""Experiment paradigms: discussion, peer pressure, dyad opinion dynamics, policy council."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm, is_model_key
    from backchannel.paradigms._items import ItemList, SkippedItem, skipped_of
    from backchannel.paradigms._registry import (
        ENTRY_POINT_GROUP,
        PARADIGMS,
        get_paradigm,
        registered,
    )

__all__ = [
    "ENTRY_POINT_GROUP",
    "PARADIGMS",
    "AnalysisOptions",
    "CallEstimate",
    "ItemList",
    "Paradigm",
    "SkippedItem",
    "get_paradigm",
    "is_model_key",
    "registered",
    "skipped_of",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._base": ("AnalysisOptions", "CallEstimate", "Paradigm", "is_model_key"),
            "._items": ("ItemList", "SkippedItem", "skipped_of"),
            "._registry": ("ENTRY_POINT_GROUP", "PARADIGMS", "get_paradigm", "registered"),
        },
    )
