"""The run store: one SQLite database (WAL) per run directory.

Each conversation's events, usage and status are committed in one transaction when it finishes,
so a killed run loses at most the conversations in flight and never leaves half a conversation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from backchannel._sqlite import connect_readonly, damage, readable_rows
from backchannel.backends import Usage, UsageMeter
from backchannel.errors import RunDirectoryError
from backchannel.store._quality import QUALITY_SQL, quality_from_row
from backchannel.store._schema import SCHEMA_VERSION, migrate, newer_schema_message

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.engine import ConversationSpec, Event, Label

DATABASE_NAME = "run.sqlite"
CACHE_NAME = "cache.sqlite"
# Columns are named on insert: stores migrated from older versions have added ones last.
_EVENT_FIELDS = (
    "conversation_id",
    "seq",
    "kind",
    "name",
    "round",
    "turn",
    "agent",
    "role",
    "channel",
    "text",
    "value",
    "status",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cached",
    "meta",
    "reasoning",
    "reasoning_tokens",
)
_USAGE_FIELDS = (
    "conversation_id",
    "model",
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


def usage_by_model(db: sqlite3.Connection) -> UsageMeter:
    """The run's usage summed per model, from an open run store connection (read-only is fine)."""
    meter = UsageMeter()
    for row in db.execute(
        "SELECT model, SUM(calls), SUM(cache_hits), SUM(prompt_tokens), "
        "SUM(completion_tokens), "
        "SUM(retries), SUM(reasks), SUM(failures), SUM(parse_failures), SUM(cost), "
        "SUM(reasoning_tokens), SUM(truncated) FROM usage GROUP BY model"
    ):
        meter.model(row[0]).add(Usage(*row[1:]))
    return meter


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class RunStore:
    """Open (or create) the store of one run directory.

    `readonly=True` (the read commands) opens the database read-only, so a read-only copy of a
    run directory works and nothing is written. An existing database is checked before use; a
    damaged one is refused with how to recover, and never written into.
    """

    def __init__(self, directory: Path, *, create: bool = False, readonly: bool = False) -> None:
        self.directory = directory
        self.readonly = readonly
        path = directory / DATABASE_NAME
        if directory.exists() and not directory.is_dir():
            raise RunDirectoryError(f"{directory} is a file, not a run directory")
        if not path.exists() and not create:
            raise RunDirectoryError(
                f"{directory} is not a run directory (no {DATABASE_NAME}); "
                "create one with `backchannel run EXPERIMENT.yaml -o DIR`"
            )
        if path.exists():
            problem = damage(path)
            if problem is not None:
                raise RunDirectoryError(_damaged_message(path, problem))
        self._lock: IO[str] | None = None
        if readonly:
            self._db = self._open_readonly(path)
            return
        _make_directory(directory)
        try:
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as error:
            raise RunDirectoryError(
                f"cannot write the run store {path} ({error}); choose a writable directory with -o"
            ) from None
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=10000")
        try:
            migrate(self._db)
        except RuntimeError as error:
            self._db.close()
            raise RunDirectoryError(f"{directory}: {error}") from None
        except sqlite3.Error as error:
            self._db.close()
            raise RunDirectoryError(
                f"cannot write the run store {path} ({error}); choose a writable directory with -o"
            ) from None

    def _open_readonly(self, path: Path) -> sqlite3.Connection:
        """A read-only connection to a store at the current schema version. An older store is
        upgraded once in place (the one write a read command makes); a read-only copy of one
        is refused with what to do."""
        db = _open_readonly(path)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = _has_schema(db)
        db.close()
        if version > SCHEMA_VERSION:
            raise RunDirectoryError(f"{self.directory}: {newer_schema_message(version)}")
        if not tables:
            raise RunDirectoryError(
                f"{path} holds no run store (schema version {version}); point the command at a "
                "run directory written by `backchannel run`"
            )
        if version < SCHEMA_VERSION:
            try:
                RunStore(self.directory).close()  # migrates
            except RunDirectoryError:
                raise RunDirectoryError(
                    f"{path} was written by an older backchannel (schema version {version}) and "
                    "cannot be upgraded here (the folder is read-only); copy the run directory "
                    "to a writable place once"
                ) from None
        return _open_readonly(path)

    def lock(self) -> None:
        """Hold the run directory for this process; a second `run` on it is refused."""
        import fcntl

        try:
            handle = open(self.directory / ".lock", "w")  # noqa: SIM115 - held until close
        except OSError as error:
            raise RunDirectoryError(
                f"cannot write in {self.directory} ({error.strerror}); commands that add to a run "
                "need a writable run directory"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunDirectoryError(
                f"another backchannel process is running in {self.directory}; wait for it to "
                "finish (or stop it) before running or resuming here"
            ) from None
        self._lock = handle

    # manifest -----------------------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM manifest")}

    def write_manifest(self, values: dict[str, Any]) -> None:
        with self._transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO manifest (key, value) VALUES (?, ?)",
                [(k, _json(v)) for k, v in values.items()],
            )

    # conversations ------------------------------------------------------------------------
    def finished_ids(self) -> set[str]:
        rows = self._db.execute("SELECT conversation_id FROM conversations WHERE status = 'done'")
        return {row[0] for row in rows}

    def commit_conversation(
        self,
        spec: ConversationSpec,
        position: int,
        events: Iterable[Event],
        usage: UsageMeter,
        meta: dict[str, Any],
        *,
        labels: Iterable[Label] = (),
        status: str = "done",
        error: str | None = None,
    ) -> None:
        """Store one finished conversation, replacing any earlier failed attempt, atomically."""
        with self._transaction():
            self._db.execute(
                "DELETE FROM conversations WHERE conversation_id = ?", (spec.conversation_id,)
            )
            self._db.execute(
                "INSERT INTO conversations (conversation_id, cell_key, cell, item_id, replicate, "
                "seed, status, error, meta, position, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    spec.conversation_id,
                    spec.cell_key,
                    _json(spec.cell),
                    spec.item.item_id,
                    spec.replicate,
                    spec.seed,
                    status,
                    error,
                    _json({"item": spec.item.payload, **meta}),
                    position,
                    time.time(),
                ),
            )
            self._db.executemany(
                f"INSERT INTO events ({', '.join(_EVENT_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(_EVENT_FIELDS))})",
                [
                    (
                        spec.conversation_id,
                        e.seq,
                        e.kind,
                        e.name,
                        e.round,
                        e.turn,
                        e.agent,
                        e.role,
                        e.channel,
                        e.text,
                        None if e.value is None else _json(e.value),
                        e.status,
                        e.model,
                        e.prompt_tokens,
                        e.completion_tokens,
                        e.latency_s,
                        int(e.cached),
                        _json(dict(e.meta)),
                        e.reasoning,
                        e.reasoning_tokens,
                    )
                    for e in events
                ],
            )
            self._db.executemany(
                f"INSERT INTO usage ({', '.join(_USAGE_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(_USAGE_FIELDS))})",
                [
                    (
                        spec.conversation_id,
                        model,
                        u.calls,
                        u.cache_hits,
                        u.prompt_tokens,
                        u.completion_tokens,
                        u.retries,
                        u.reasks,
                        u.failures,
                        u.parse_failures,
                        u.cost,
                        u.reasoning_tokens,
                        u.truncated,
                    )
                    for model, u in usage.by_model.items()
                ],
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO labels (conversation_id, event_seq, judge, label, status, "
                "text, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (spec.conversation_id, x.event_seq, x.judge, x.label, x.status, x.text, x.model)
                    for x in labels
                ],
            )

    def add_labels(
        self, judge: str, rows: Iterable[tuple[str, int, str | None, str, str, str]]
    ) -> int:
        """Store (conversation_id, event_seq, label, status, text, model) rows under `judge`."""
        rows = list(rows)
        with self._transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO labels (conversation_id, event_seq, judge, label, status, "
                "text, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (c, s, judge, label, status, text, model)
                    for c, s, label, status, text, model in rows
                ],
            )
        return len(rows)

    def counts(self) -> dict[str, int]:
        done, incomplete, failed = self._db.execute(
            "SELECT COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'incomplete'), 0), "
            "COALESCE(SUM(status = 'failed'), 0) FROM conversations"
        ).fetchone()
        events = self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        return {
            "done": int(done),
            "incomplete": int(incomplete),
            "failed": int(failed),
            "events": int(events),
        }

    def record_plan(self, planned: int) -> None:
        """Note how many conversations the current `run` means to store (for `run_state`)."""
        self.write_manifest({"planned_conversations": planned})

    def running(self) -> bool:
        """Whether a `run` process holds this run directory now (its lock is taken)."""
        import fcntl

        if self._lock is not None:
            return True
        try:
            handle = open(self.directory / ".lock")  # noqa: SIM115 - closed below
        except OSError:
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            handle.close()
        return False

    def run_state(self) -> dict[str, Any]:
        """Whether the run is complete: still running, conversations incomplete, failed or not
        yet started (of those the last `run` planned)."""
        counts = self.counts()
        planned = self.manifest().get("planned_conversations")
        stored = counts["done"] + counts["incomplete"] + counts["failed"]
        not_started = max(0, int(planned) - stored) if isinstance(planned, int) else 0
        running = self.running()
        return {
            "complete": not running
            and counts["incomplete"] == counts["failed"] == not_started == 0,
            "running": running,
            "done": counts["done"],
            "incomplete": counts["incomplete"],
            "failed": counts["failed"],
            "not_started": not_started,
        }

    def answer_quality(self) -> dict[str, int]:
        """Model answers stored, and how many are empty, unreadable, refused or failed calls."""
        return quality_from_row(self._db.execute(QUALITY_SQL).fetchone())

    def errors(self, limit: int = 5) -> list[tuple[str, int, str]]:
        """Distinct errors of unfinished conversations: (last line, how many, one example id)."""
        rows = self._db.execute(
            "SELECT conversation_id, error FROM conversations "
            "WHERE status != 'done' AND error IS NOT NULL ORDER BY position"
        ).fetchall()
        grouped: dict[str, list[str]] = {}
        for conversation_id, error in rows:
            grouped.setdefault(error.strip().splitlines()[-1], []).append(conversation_id)
        return [(line, len(ids), ids[0]) for line, ids in list(grouped.items())[:limit]]

    def usage(self) -> UsageMeter:
        return usage_by_model(self._db)

    def conversation_metas(self) -> list[str | None]:
        """The `meta` JSON of every stored conversation, in run order (the `meta` column of the
        conversations table, read without building the tables)."""
        rows = self._db.execute("SELECT meta FROM conversations ORDER BY position").fetchall()
        return [meta for (meta,) in rows]

    # tables -------------------------------------------------------------------------------
    def tables(self) -> RunTables:
        """The tidy tables of everything stored (see docs/data-schema.md); the manifest gains
        `run_state`, saying whether the run is complete."""
        import pandas as pd

        from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, RunTables

        manifest = {**self.manifest(), "run_state": self.run_state()}
        run_id = str(manifest.get("run_id", self.directory.name))
        conversations = pd.read_sql_query(
            "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, meta "
            "FROM conversations ORDER BY position",
            self._db,
        )
        conversations.insert(0, "run_id", run_id)
        conversations.insert(2, "paradigm", manifest.get("paradigm", ""))
        factors = list(manifest.get("factors", []))
        cells = conversations["cell"].map(json.loads)
        for factor in factors:
            conversations[factor] = cells.map(lambda c, f=factor: c.get(f))
        conversations = conversations[[*CONVERSATION_BASE_COLUMNS, *factors]]
        order = {cid: i for i, cid in enumerate(conversations["conversation_id"])}
        # Each event's meta (its prompt) is most of the table; it is read when first used.
        columns = [c for c in EVENT_COLUMNS if c not in ("run_id", "meta")]
        events = pd.read_sql_query(f"SELECT {', '.join(columns)} FROM events", self._db)
        events.insert(0, "run_id", run_id)
        events["cached"] = events["cached"].astype(bool)
        events["turn"] = events["turn"].astype("Int64")
        events = _in_conversation_order(events, order, "seq")
        labels = pd.read_sql_query("SELECT * FROM labels", self._db)
        labels.insert(0, "run_id", run_id)
        labels = _in_conversation_order(labels, order, "event_seq", "judge")
        path = self.directory / DATABASE_NAME
        return RunTables(
            events, labels, conversations, manifest, event_meta=lambda e: _event_meta(path, e)
        )

    # plumbing -----------------------------------------------------------------------------
    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def incomplete_summary(state: dict[str, Any] | None) -> str | None:
    """One sentence saying why a run's figures are partial, or None for a complete run."""
    if not state or state.get("complete", True):
        return None
    parts = [
        f"{state[key]} {label}"
        for key, label in (
            ("incomplete", "incomplete"),
            ("failed", "failed"),
            ("not_started", "not yet run"),
        )
        if state.get(key)
    ]
    what = "This run is still going" if state.get("running") else "This run is not complete"
    detail = (
        f" ({', '.join(parts)} conversations beside {state.get('done', 0)} done)" if parts else ""
    )
    return (
        f"{what}{detail}: the figures cover only what is stored. Run the same `backchannel run` "
        "command again to finish it, then rebuild this output."
    )


def _damaged_message(path: Path, problem: str) -> str:
    rows = readable_rows(path, "events")
    salvage = (
        f"{rows} events are still readable: copy them out with `sqlite3 {path} .recover`"
        if rows
        else "nothing in it can be read back"
    )
    return (
        f"{path} {problem}; it was left untouched. {salvage}, or run again into a new -o "
        "directory (copy the run's cache.sqlite there to reuse the answers already received)"
    )


def _open_readonly(path: Path) -> sqlite3.Connection:
    try:
        return connect_readonly(path)
    except sqlite3.Error as error:
        raise RunDirectoryError(f"cannot read the run store {path} ({error})") from None


def _has_schema(db: sqlite3.Connection) -> bool:
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {"manifest", "conversations", "events", "labels", "usage"} <= names


def _make_directory(directory: Path) -> None:
    """Create the run directory, or say in one line why it cannot be created."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RunDirectoryError(f"{directory} is a file; pass a directory with -o") from None
    except NotADirectoryError:
        raise RunDirectoryError(
            f"cannot create {directory}: a part of the path is a file; choose another -o"
        ) from None
    except OSError as error:
        raise RunDirectoryError(
            f"cannot create {directory} ({error.strerror}); choose a writable place with -o"
        ) from None


def _event_meta(path: Path, events: pd.DataFrame) -> pd.Series:
    """The stored `meta` of each of `events` (matched by conversation and seq)."""
    import pandas as pd

    db = _open_readonly(path)
    try:
        meta = pd.read_sql_query("SELECT conversation_id, seq, meta FROM events", db)
    finally:
        db.close()
    keyed = meta.set_index(["conversation_id", "seq"])["meta"]
    wanted = pd.MultiIndex.from_arrays([events["conversation_id"], events["seq"]])
    return keyed.reindex(wanted).set_axis(events.index)


def _in_conversation_order(frame: pd.DataFrame, order: dict[str, int], *keys: str) -> pd.DataFrame:
    position = frame["conversation_id"].map(order).fillna(len(order))
    return (
        frame.assign(_position=position)
        .sort_values(["_position", *keys], kind="stable")
        .drop(columns="_position")
        .reset_index(drop=True)
    )


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
