"""The columns of the tidy tables, defined once: the store's schema and reader, the analysis
frames, the exports and the viewer's reader are all built from these tuples."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a tidy table: its name, Python type, and whether it may be null.

    `json` marks a text column that holds JSON (decoded by `RunTables.events_of`)."""

    name: str
    type: type
    nullable: bool = False
    json: bool = False


EVENT_TABLE: tuple[Column, ...] = (
    Column("run_id", str),
    Column("conversation_id", str),
    Column("seq", int),
    Column("kind", str),
    Column("name", str),
    Column("round", int),
    Column("turn", int, nullable=True),
    Column("agent", str),
    Column("role", str),
    Column("channel", str),
    Column("text", str),
    Column("reasoning", str),
    Column("value", str, nullable=True, json=True),
    Column("status", str),
    Column("model", str),
    Column("prompt_tokens", int),
    Column("completion_tokens", int),
    Column("reasoning_tokens", int),
    Column("latency_s", float),
    Column("cached", bool),
    Column("meta", str, json=True),
)
"""One row per event. `meta` holds everything of `Event.meta` but the prompt, which is in
`PROMPT_TABLE` (the largest part of a run, read only by what shows it)."""

PROMPT_TABLE: tuple[Column, ...] = (
    Column("run_id", str),
    Column("conversation_id", str),
    Column("seq", int),
    Column("prompt", str, json=True),
)
"""One row per event that was a model call: the messages of its last attempt as JSON text,
`[[role, content], ...]`, exactly as the model received them."""

LABEL_TABLE: tuple[Column, ...] = (
    Column("run_id", str),
    Column("conversation_id", str),
    Column("event_seq", int),
    Column("judge", str),
    Column("label", str, nullable=True),
    Column("status", str),
    Column("text", str),
    Column("model", str),
)

CONVERSATION_TABLE: tuple[Column, ...] = (
    Column("run_id", str),
    Column("conversation_id", str),
    Column("paradigm", str),
    Column("cell_key", str),
    Column("cell", str, json=True),
    Column("item_id", str),
    Column("replicate", int),
    Column("seed", int),
    Column("status", str),
    Column("error", str, nullable=True),
    Column("meta", str, json=True),
)
"""The columns every conversations table has; one column per design factor follows them."""


def column_names(columns: tuple[Column, ...]) -> list[str]:
    """The column names, in order."""
    return [c.name for c in columns]
