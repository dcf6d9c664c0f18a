"""SQLite files of a run directory opened safely: a damaged file is detected before anything is
written into it, and read-only opening works on a read-only copy of a run directory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_HEADER = b"SQLite format 3\x00"


def damage(path: Path) -> str | None:
    """Why the existing SQLite file at `path` cannot be trusted, or None when it reads as sound.

    Checks the header (a zero-byte or garbage file is not a database) and runs SQLite's
    `quick_check`, read-only, so the check itself writes nothing."""
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_HEADER))
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if not header:
        return "is empty (0 bytes)"
    if header != _HEADER:
        return "is not an SQLite database"
    try:
        db = connect_readonly(path)
    except sqlite3.Error as error:
        return f"is damaged ({error})"
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as error:
        return f"is damaged ({error})"
    finally:
        db.close()
    problems = [str(row[0]) for row in rows if row[0] != "ok"]
    if problems:
        return f"is damaged ({problems[0]})"
    return None


def readable_rows(path: Path, table: str) -> int | None:
    """How many rows of `table` a damaged file still yields, or None when none can be read."""
    try:
        db = connect_readonly(path)
    except sqlite3.Error:
        return None
    try:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        db.close()


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing next to the file.

    Without a write-ahead log beside it the database is fully written out and no run is
    writing it, so it is opened as immutable (SQLite then creates no -wal or -shm file). With a
    log (a run in progress, or one killed), it is opened read-only so the log is read too; in a
    folder we cannot write to (a read-only copy) that falls back to immutable.
    """
    uri = path.resolve().as_uri()
    if not Path(f"{path}-wal").exists():
        return _open(f"{uri}?mode=ro&immutable=1")
    try:
        return _open(f"{uri}?mode=ro")
    except sqlite3.OperationalError:
        return _open(f"{uri}?mode=ro&immutable=1")


def _open(uri: str) -> sqlite3.Connection:
    db = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        db.close()
        raise
    return db
