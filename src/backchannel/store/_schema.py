"""The run store's SQLite schema, versioned with PRAGMA user_version.

Version 4 is the compact form (docs/data-schema.md, "How a run is stored"): conversations get an
integer key that events, labels, usage and documents use; repeated short texts (kind, name,
agent, role, channel, status, model, judge) are codes into `names`; each conversation's meta,
its events' meta and its prompts are one compressed document each (see `_codec`). The events
and labels tables are built from the tidy columns' one definition (`backchannel.engine`).
"""

from __future__ import annotations

import sqlite3

from backchannel.engine import EVENT_TABLE, LABEL_TABLE, Column

SCHEMA_VERSION = 4
LAST_ROW_SCHEMA = 3
"""The last version that stored rows as the tidy tables are (moved by `_migrate`)."""

CODED = frozenset({"kind", "name", "agent", "role", "channel", "status", "model", "judge"})
"""Text columns stored as codes into `names` (a few distinct values, repeated on every row)."""
KEYS = ("run_id", "conversation_id")
EVENT_STORED: tuple[Column, ...] = tuple(c for c in EVENT_TABLE if c.name not in (*KEYS, "meta"))
"""The events columns kept in the events table (their `meta` is a document)."""
LABEL_STORED: tuple[Column, ...] = tuple(c for c in LABEL_TABLE if c.name not in KEYS)
USAGE_FIELDS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "reasks",
    "failures",
    "parse_failures",
    "cost",
    "reasoning_tokens",
    "truncated",
)
QUALITY_FIELDS = ("answers", "empty", "unreadable", "refused", "errors")
"""Per-conversation answer counts (see `_quality`), kept so `status` reads no event."""
DOCUMENT_TABLES = ("conversation_meta", "event_meta", "prompts")
_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL", bool: "INTEGER"}


def _column_sql(column: Column) -> str:
    kind = "INTEGER" if column.name in CODED else _SQL_TYPES[column.type]
    return f"{column.name} {kind}{'' if column.nullable else ' NOT NULL'}"


def _keyed_table(name: str, columns: tuple[Column, ...], key: tuple[str, ...]) -> str:
    body = ",\n    ".join(
        [
            "conv INTEGER NOT NULL REFERENCES conversations(conv) ON DELETE CASCADE",
            *(_column_sql(c) for c in columns),
            f"PRIMARY KEY (conv, {', '.join(key)})",
        ]
    )
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    {body}\n) WITHOUT ROWID;\n"


def _document_table(name: str) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {name} (\n"
        "    conv INTEGER PRIMARY KEY REFERENCES conversations(conv) ON DELETE CASCADE,\n"
        "    dictionary INTEGER REFERENCES dictionaries(id),\n"
        "    data BLOB NOT NULL\n);\n"
    )


SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS manifest (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS names (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS dictionaries (
    id INTEGER PRIMARY KEY,
    part TEXT NOT NULL UNIQUE,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    conv INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL UNIQUE,
    cell_key TEXT NOT NULL,
    cell TEXT NOT NULL,
    item_id TEXT NOT NULL,
    replicate INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'incomplete', 'failed')),
    error TEXT,
    position INTEGER NOT NULL,
    finished_at REAL NOT NULL,
    replica_calls TEXT,
    shared_calls INTEGER NOT NULL DEFAULT 0,
    labelled INTEGER NOT NULL,
    events INTEGER NOT NULL,
"""
    + "".join(f"    {f} INTEGER NOT NULL,\n" for f in QUALITY_FIELDS).rstrip(",\n")
    + "\n);\n"
    + _keyed_table("events", EVENT_STORED, ("seq",))
    + _keyed_table("labels", LABEL_STORED, ("event_seq", "judge"))
    + _keyed_table(
        "usage",
        (Column("model", str), *(Column(f, float if f == "cost" else int) for f in USAGE_FIELDS)),
        ("model",),
    )
    + "".join(_document_table(name) for name in DOCUMENT_TABLES)
)

SCHEMA_V3 = """
CREATE TABLE IF NOT EXISTS manifest (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    conversation_id TEXT PRIMARY KEY,
    cell_key TEXT NOT NULL,
    cell TEXT NOT NULL,
    item_id TEXT NOT NULL,
    replicate INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'incomplete', 'failed')),
    error TEXT,
    meta TEXT NOT NULL,
    position INTEGER NOT NULL,
    finished_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    round INTEGER NOT NULL,
    turn INTEGER,
    agent TEXT NOT NULL,
    role TEXT NOT NULL,
    channel TEXT NOT NULL CHECK (channel IN ('public', 'direct', 'private')),
    text TEXT NOT NULL,
    value TEXT,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cached INTEGER NOT NULL,
    meta TEXT NOT NULL,
    reasoning TEXT NOT NULL DEFAULT '',
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE IF NOT EXISTS labels (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    event_seq INTEGER NOT NULL,
    judge TEXT NOT NULL,
    label TEXT,
    status TEXT NOT NULL,
    text TEXT NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (conversation_id, event_seq, judge)
);
CREATE TABLE IF NOT EXISTS usage (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL,
    cache_hits INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    reasks INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    parse_failures INTEGER NOT NULL,
    cost REAL NOT NULL,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conversation_id, model)
);
"""

# MIGRATIONS[v] brings a store of rows at version v - 1 to version v (v <= 3); `_migrate` moves a
# version 3 store into the compact form.
MIGRATIONS: dict[int, str] = {
    # 2: reasoning models: each event's reasoning and reasoning tokens, and per-model
    # reasoning tokens and truncated answers in usage.
    2: """
ALTER TABLE events ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;
""",
    # 3: the `direct` channel. SQLite cannot change a CHECK constraint in place, so the events
    # table is rebuilt with the new one and its rows copied over, in one transaction.
    3: """
BEGIN;
CREATE TABLE events_v3 (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    round INTEGER NOT NULL,
    turn INTEGER,
    agent TEXT NOT NULL,
    role TEXT NOT NULL,
    channel TEXT NOT NULL CHECK (channel IN ('public', 'direct', 'private')),
    text TEXT NOT NULL,
    value TEXT,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cached INTEGER NOT NULL,
    meta TEXT NOT NULL,
    reasoning TEXT NOT NULL DEFAULT '',
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conversation_id, seq)
);
INSERT INTO events_v3 (
    conversation_id, seq, kind, name, round, turn, agent, role, channel, text, value, status,
    model, prompt_tokens, completion_tokens, latency_s, cached, meta, reasoning, reasoning_tokens
) SELECT
    conversation_id, seq, kind, name, round, turn, agent, role, channel, text, value, status,
    model, prompt_tokens, completion_tokens, latency_s, cached, meta, reasoning, reasoning_tokens
FROM events;
DROP TABLE events;
ALTER TABLE events_v3 RENAME TO events;
COMMIT;
""",
}


def newer_schema_message(version: int) -> str:
    return (
        f"this run store has schema version {version}, newer than this backchannel "
        f"({SCHEMA_VERSION}); upgrade backchannel to read it"
    )


def upgrade_rows(db: sqlite3.Connection) -> int:
    """Create the schema of a new store, or bring a store of rows (versions 1-3) up to version
    3 in place; returns the version it is at now (0 for a new store, which gets version 4)."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise RuntimeError(newer_schema_message(version))
    if version == 0:
        db.executescript(SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return SCHEMA_VERSION
    if version < LAST_ROW_SCHEMA:
        for target in range(version + 1, LAST_ROW_SCHEMA + 1):
            db.executescript(MIGRATIONS[target])
        db.execute(f"PRAGMA user_version = {LAST_ROW_SCHEMA}")
        return LAST_ROW_SCHEMA
    return version
