"""Bring a run store of rows (schema versions 1-3) into the compact form (version 4).

The move is resumable and loses nothing: the old tables are renamed (`v3_*`) beside the new
ones in one transaction, then conversations move in batches, each batch in one transaction
that also advances the cursor in `v3_moved`. A killed move goes on from its cursor when the
store is next opened; the old tables are dropped only once every event and label is counted in
the new ones.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from backchannel.store._rows import ConversationRecord, EventRecord, Writer, split_meta
from backchannel.store._schema import (
    EVENT_STORED,
    LAST_ROW_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    USAGE_FIELDS,
    upgrade_rows,
)

BATCH = 200
"""Conversations moved per transaction."""
OLD_TABLES = ("conversations", "events", "labels", "usage")
_CURSOR = "v3_moved"
_EVENT_NAMES = [c.name for c in EVENT_STORED]


class MigrationError(RuntimeError):
    """The moved store does not hold every event or label of the old one (nothing dropped)."""


def moving(db: sqlite3.Connection) -> bool:
    """Whether a move into the compact form has started and not finished."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_CURSOR,)
    ).fetchone()
    return row is not None


def bring_up_to_date(
    db: sqlite3.Connection,
    *,
    batch: int = BATCH,
    on_batch: Callable[[int, int], None] | None = None,
) -> None:
    """Create a new store's schema, or move an older store into the current one (resuming a
    move a killed process left). `on_batch(moved, total)` follows the move."""
    version = upgrade_rows(db)
    if version == LAST_ROW_SCHEMA and not moving(db):
        _start(db)
    if moving(db):
        _move(db, batch, on_batch)


def _start(db: sqlite3.Connection) -> None:
    renames = "".join(f"ALTER TABLE {t} RENAME TO v3_{t};\n" for t in OLD_TABLES)
    db.executescript(
        "BEGIN IMMEDIATE;\n"
        + renames
        + SCHEMA
        + f"CREATE TABLE {_CURSOR} (last INTEGER NOT NULL);\n"
        + f"INSERT INTO {_CURSOR} VALUES (0);\n"
        + f"PRAGMA user_version = {SCHEMA_VERSION};\n"
        + "COMMIT;\n"
    )


def _old_tables(db: sqlite3.Connection) -> bool:
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'v3_conversations'"
    ).fetchone()
    return row is not None


def _move(db: sqlite3.Connection, batch: int, on_batch: Callable[[int, int], None] | None) -> None:
    if _old_tables(db):
        writer = Writer(db)
        total = int(db.execute("SELECT COUNT(*) FROM v3_conversations").fetchone()[0])
        while True:
            last = int(db.execute(f"SELECT last FROM {_CURSOR}").fetchone()[0])
            rows = db.execute(
                "SELECT rowid, conversation_id, cell_key, cell, item_id, replicate, seed, status, "
                "error, meta, position, finished_at FROM v3_conversations WHERE rowid > ? "
                "ORDER BY rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                break
            db.execute("BEGIN IMMEDIATE")
            committed = False
            try:
                for row in rows:
                    _move_one(db, writer, ConversationRecord(*row[1:]))
                db.execute(f"UPDATE {_CURSOR} SET last = ?", (rows[-1][0],))
                db.execute("COMMIT")
                committed = True
            finally:
                if not committed:
                    db.execute("ROLLBACK")
                writer.settled(committed)
            if on_batch is not None:
                moved = db.execute(
                    "SELECT COUNT(*) FROM v3_conversations WHERE rowid <= ?", (rows[-1][0],)
                ).fetchone()[0]
                on_batch(int(moved), total)
        _check_counts(db)
        db.executescript(
            "BEGIN IMMEDIATE;\n"
            + "".join(f"DROP TABLE v3_{t};\n" for t in ("events", "labels", "usage"))
            + "DROP TABLE v3_conversations;\nCOMMIT;\n"
        )
    db.execute("VACUUM")  # give the old tables' pages back to the file system
    db.execute(f"DROP TABLE {_CURSOR}")


def _move_one(db: sqlite3.Connection, writer: Writer, conversation: ConversationRecord) -> None:
    cid = conversation.conversation_id
    events = []
    for row in db.execute(
        f"SELECT {', '.join(_EVENT_NAMES)}, meta FROM v3_events WHERE conversation_id = ? "
        "ORDER BY seq",
        (cid,),
    ):
        meta, prompt = split_meta(json.loads(row[-1]))
        events.append(EventRecord(tuple(row[:-1]), meta, prompt))
    labels = db.execute(
        "SELECT event_seq, judge, label, status, text, model FROM v3_labels "
        "WHERE conversation_id = ?",
        (cid,),
    ).fetchall()
    usage = db.execute(
        f"SELECT model, {', '.join(USAGE_FIELDS)} FROM v3_usage WHERE conversation_id = ?", (cid,)
    ).fetchall()
    writer.insert(conversation, events, labels, usage)


def _check_counts(db: sqlite3.Connection) -> None:
    for table in ("conversations", "events", "labels", "usage"):
        old = db.execute(f"SELECT COUNT(*) FROM v3_{table}").fetchone()[0]
        new = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        if old != new:
            raise MigrationError(
                f"moving the run store into schema {SCHEMA_VERSION} kept {new} of {old} rows of "
                f"{table}; the old rows are kept in v3_{table}"
            )
