"""The run store's SQLite schema, versioned with PRAGMA user_version."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 3

SCHEMA = """
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

# MIGRATIONS[v] brings a store at version v - 1 to version v. New columns go last in SCHEMA
# too, so a migrated store and a new one have the same column order.
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


def migrate(db: sqlite3.Connection) -> None:
    """Create the schema, or bring an older store up to SCHEMA_VERSION."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise RuntimeError(newer_schema_message(version))
    if version == 0:
        db.executescript(SCHEMA)
    else:
        for target in range(version + 1, SCHEMA_VERSION + 1):
            db.executescript(MIGRATIONS[target])
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
