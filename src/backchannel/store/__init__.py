"""The run store: SQLite run directories that resume, and export to tidy tables."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.store._export import ExportFormat, export_tables
    from backchannel.store._quality import (
        UNUSABLE_THRESHOLD,
        answer_quality,
        describe_quality,
        unusable_message,
        unusable_share,
    )
    from backchannel.store._schema import SCHEMA_VERSION
    from backchannel.store._store import (
        CACHE_NAME,
        DATABASE_NAME,
        RunStore,
        incomplete_summary,
        usage_by_model,
    )

__all__ = [
    "CACHE_NAME",
    "DATABASE_NAME",
    "SCHEMA_VERSION",
    "UNUSABLE_THRESHOLD",
    "ExportFormat",
    "RunStore",
    "answer_quality",
    "describe_quality",
    "export_tables",
    "incomplete_summary",
    "unusable_message",
    "unusable_share",
    "usage_by_model",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._export": ("ExportFormat", "export_tables"),
            "._quality": (
                "UNUSABLE_THRESHOLD",
                "answer_quality",
                "describe_quality",
                "unusable_message",
                "unusable_share",
            ),
            "._schema": ("SCHEMA_VERSION",),
            "._store": (
                "CACHE_NAME",
                "DATABASE_NAME",
                "RunStore",
                "incomplete_summary",
                "usage_by_model",
            ),
        },
    )
