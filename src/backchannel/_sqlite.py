"""SQLite files of a run directory opened safely: a damaged file is detected before anything is
written into it, and read-only opening works on a read-only copy of a run directory.

A whole-file `quick_check` reads every page, seconds for a large run, so it is made once when a
writer closes the file and recorded beside it (`-check`: the file's size, times and inode as
they were when found sound). Opening a file that still matches its record checks only the
header; any later write to it (a run, a copy, damage) changes those, and the next open checks
again: the tables a command reads, or the whole file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

_HEADER = b"SQLite format 3\x00"
CHECK_SUFFIX = "-check"


def _stamp(path: Path) -> dict[str, int] | None:
    """What a write to `path` changes (None while a write-ahead log with frames is beside it).

    An empty log holds no pages, so the file alone is the database: any reader opening a WAL
    database (the `sqlite3` shell, a script) leaves one behind, and that must not make every
    later command check the whole file again."""
    if _log_has_frames(path):
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,
        "inode": stat.st_ino,
    }


def _log_has_frames(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


def record_sound(path: Path) -> None:
    """After a writer closed `path`: check the whole file and, when it is sound, record that
    beside it, so the next opens need not check it again. Writes nothing where it cannot."""
    record = Path(f"{path}{CHECK_SUFFIX}")
    try:
        record.unlink(missing_ok=True)
    except OSError:
        return
    stamp = _stamp(path)
    if stamp is None or _check(path, None) is not None:
        return
    if _stamp(path) != stamp:
        return
    staged = record.with_name(f".{record.name}.tmp")
    try:
        staged.write_text(json.dumps({"sound": stamp}))
        os.replace(staged, record)
    except OSError:
        staged.unlink(missing_ok=True)


def recorded_sound(path: Path) -> bool:
    """Whether `path` is exactly as it was when a writer found it sound."""
    try:
        recorded = json.loads(Path(f"{path}{CHECK_SUFFIX}").read_text())
    except (OSError, ValueError):
        return False
    stamp = _stamp(path)
    return stamp is not None and isinstance(recorded, dict) and recorded.get("sound") == stamp


def damage(path: Path, tables: Sequence[str] | None = None) -> str | None:
    """Why the existing SQLite file at `path` cannot be trusted, or None when it reads as sound.

    Checks the header (a zero-byte or garbage file is not a database); unless the file is as a
    writer recorded it sound, runs SQLite's `quick_check`, read-only, so the check itself
    writes nothing: of `tables` (and their indexes) when given, else of the whole file."""
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_HEADER))
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if not header:
        return "is empty (0 bytes)"
    if header != _HEADER:
        return "is not an SQLite database"
    if recorded_sound(path):
        return None
    return _check(path, tables)


def _check(path: Path, tables: Sequence[str] | None) -> str | None:
    try:
        db = connect_readonly(path)
    except sqlite3.Error as error:
        return f"is damaged ({error})"
    try:
        if tables is None:
            rows = db.execute("PRAGMA quick_check").fetchall()
        else:
            present = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            rows = [
                row
                for table in tables
                if table in present
                for row in db.execute(f'PRAGMA quick_check("{table}")').fetchall()
            ]
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
