"""The run store: SQLite run directories that resume, and export to tidy tables."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.store._export import ExportFormat, export_batches, export_tables
    from backchannel.store._lookup import StoredConversations
    from backchannel.store._quality import (
        UNUSABLE_THRESHOLD,
        answer_quality,
        describe_quality,
        tables_answer_quality,
        unusable_message,
        unusable_share,
    )
    from backchannel.store._schema import SCHEMA_VERSION
    from backchannel.store._store import (
        CACHE_NAME,
        DATABASE_NAME,
        EXPORT_BATCH,
        LOCK_NAME,
        STATUS_TABLES,
        RunStore,
        incomplete_summary,
        lock_held,
        usage_by_model,
    )

__all__ = [
    "CACHE_NAME",
    "DATABASE_NAME",
    "EXPORT_BATCH",
    "LOCK_NAME",
    "SCHEMA_VERSION",
    "STATUS_TABLES",
    "UNUSABLE_THRESHOLD",
    "ExportFormat",
    "RunStore",
    "StoredConversations",
    "answer_quality",
    "describe_quality",
    "export_batches",
    "export_tables",
    "incomplete_summary",
    "lock_held",
    "tables_answer_quality",
    "unusable_message",
    "unusable_share",
    "usage_by_model",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._export": ("ExportFormat", "export_batches", "export_tables"),
            "._lookup": ("StoredConversations",),
            "._quality": (
                "UNUSABLE_THRESHOLD",
                "answer_quality",
                "describe_quality",
                "tables_answer_quality",
                "unusable_message",
                "unusable_share",
            ),
            "._schema": ("SCHEMA_VERSION",),
            "._store": (
                "CACHE_NAME",
                "DATABASE_NAME",
                "EXPORT_BATCH",
                "LOCK_NAME",
                "STATUS_TABLES",
                "RunStore",
                "incomplete_summary",
                "lock_held",
                "usage_by_model",
            ),
        },
    )
