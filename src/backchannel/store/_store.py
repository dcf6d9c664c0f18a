"""The run store: one SQLite database (WAL) per run directory.

Each conversation's events, usage and status are committed in one transaction when it finishes,
so a killed run loses at most the conversations in flight and never leaves half a conversation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from backchannel._sqlite import (
    CHECK_SUFFIX,
    connect_readonly,
    damage,
    readable_rows,
    record_sound,
)
from backchannel.backends import Usage, UsageMeter
from backchannel.errors import RunDirectoryError
from backchannel.store._migrate import MigrationError, bring_up_to_date, moving
from backchannel.store._quality import quality_from_row
from backchannel.store._rows import (
    ConversationRecord,
    Decoder,
    EventRecord,
    Writer,
    canonical_json,
    split_meta,
)
from backchannel.store._schema import (
    EVENT_STORED,
    QUALITY_FIELDS,
    SCHEMA_VERSION,
    newer_schema_message,
)

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.engine import ConversationSpec, Event, Label

DATABASE_NAME = "run.sqlite"
STATUS_TABLES = ("manifest", "conversations", "usage", "names")
"""The tables `status` reads (and checks, when the file is not as its writer left it)."""
CACHE_NAME = "cache.sqlite"
EXPORT_BATCH = 100
"""Conversations per batch of `export` (its memory is that of one batch)."""


LOCK_NAME = ".lock"
"""The file whose lock a writing `run` holds in its run directory."""


def usage_by_model(db: sqlite3.Connection) -> UsageMeter:
    """The run's usage summed per model, from an open run store connection (read-only is fine)."""
    meter = UsageMeter()
    for row in db.execute(
        "SELECT n.name, SUM(calls), SUM(cache_hits), SUM(prompt_tokens), "
        "SUM(completion_tokens), "
        "SUM(retries), SUM(reasks), SUM(failures), SUM(parse_failures), SUM(cost), "
        "SUM(reasoning_tokens), SUM(truncated) FROM usage u JOIN names n ON n.id = u.model "
        "GROUP BY u.model"
    ):
        meter.model(row[0]).add(Usage(*row[1:]))
    return meter


_json = canonical_json


class RunStore:
    """Open (or create) the store of one run directory.

    `readonly=True` (the read commands) opens the database read-only, so a read-only copy of a
    run directory works and nothing is written. An existing database is checked before use; a
    damaged one is refused with how to recover, and never written into. A file as the last
    writer left it (and found sound when it closed) is not checked again; otherwise a command
    that gives `reads` (the tables it reads) checks those, any other the whole file.
    """

    def __init__(
        self,
        directory: Path,
        *,
        create: bool = False,
        readonly: bool = False,
        reads: Sequence[str] | None = None,
    ) -> None:
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
            problem = damage(path, reads if readonly else None)
            if problem is not None:
                raise RunDirectoryError(_damaged_message(path, problem))
        self._lock: IO[str] | None = None
        self._writer: Writer | None = None
        self._decoder: Decoder | None = None
        if readonly:
            self._db = self._open_readonly(path)
            return
        _make_directory(directory)
        try:
            Path(f"{path}{CHECK_SUFFIX}").unlink(missing_ok=True)  # written again on close
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
            bring_up_to_date(self._db)
        except (RuntimeError, MigrationError) as error:
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
        pending = moving(db)
        db.close()
        if version > SCHEMA_VERSION:
            raise RunDirectoryError(f"{self.directory}: {newer_schema_message(version)}")
        if not tables:
            raise RunDirectoryError(
                f"{path} holds no run store (schema version {version}); point the command at a "
                "run directory written by `backchannel run`"
            )
        if version < SCHEMA_VERSION or pending:
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
            handle = open(self.directory / LOCK_NAME, "w")  # noqa: SIM115 - held until close
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
        conversation = ConversationRecord(
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
        )
        records = [_event_record(e) for e in events]
        label_rows = [(x.event_seq, x.judge, x.label, x.status, x.text, x.model) for x in labels]
        usage_rows = [
            (
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
        ]
        writer = self._writing()
        with self._transaction(writer):
            writer.insert(conversation, records, label_rows, usage_rows)

    def add_labels(
        self, judge: str, rows: Iterable[tuple[str, int, str | None, str, str, str]]
    ) -> int:
        """Store (conversation_id, event_seq, label, status, text, model) rows under `judge`."""
        by_conversation: dict[str, list[tuple[Any, ...]]] = {}
        count = 0
        for c, s, label, status, text, model in rows:
            by_conversation.setdefault(c, []).append((s, judge, label, status, text, model))
            count += 1
        writer = self._writing()
        with self._transaction(writer):
            for conversation_id, labels in by_conversation.items():
                row = self._db.execute(
                    "SELECT conv FROM conversations WHERE conversation_id = ?", (conversation_id,)
                ).fetchone()
                if row is None:
                    raise ValueError(f"no conversation {conversation_id!r} in {self.directory}")
                writer.add_labels(int(row[0]), labels)
        return count

    def counts(self) -> dict[str, int]:
        done, incomplete, failed = self._db.execute(
            "SELECT COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'incomplete'), 0), "
            "COALESCE(SUM(status = 'failed'), 0) FROM conversations"
        ).fetchone()
        events = self._db.execute("SELECT COALESCE(SUM(events), 0) FROM conversations").fetchone()[
            0
        ]
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
        return self._lock is not None or lock_held(self.directory)

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
        sums = ", ".join(f"COALESCE(SUM({f}), 0)" for f in QUALITY_FIELDS)
        return quality_from_row(self._db.execute(f"SELECT {sums} FROM conversations").fetchone())

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

    def error_of(self, conversation_id: str) -> str | None:
        """The whole stored error of one conversation (a failure's traceback), or None."""
        row = self._db.execute(
            "SELECT error FROM conversations WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
        return None if row is None else row[0]

    def usage(self) -> UsageMeter:
        return usage_by_model(self._db)

    def replica_calls(self) -> list[str]:
        """Calls per replica (JSON) of every stored conversation that recorded them, in run
        order: `meta.replica_calls`, read without reading any conversation's meta."""
        rows = self._db.execute(
            "SELECT replica_calls FROM conversations WHERE replica_calls IS NOT NULL "
            "ORDER BY position"
        ).fetchall()
        return [calls for (calls,) in rows]

    def shared_calls(self) -> int:
        """Calls of stored conversations that another conversation's call answered (paired arms
        sharing their common calls), read without reading any conversation's meta."""
        (total,) = self._db.execute(
            "SELECT COALESCE(SUM(shared_calls), 0) FROM conversations"
        ).fetchone()
        return int(total)

    # tables -------------------------------------------------------------------------------
    def tables(self) -> RunTables:
        """The tidy tables of everything stored (see docs/data-schema.md); the manifest gains
        `run_state`, saying whether the run is complete. The events' meta and the prompts are
        read when first used."""
        from backchannel.analysis import RunTables
        from backchannel.store._frames import (
            conversations_frame,
            events_frame,
            labels_frame,
            scopes,
            whole_reads,
        )

        manifest = {**self.manifest(), "run_state": self.run_state()}
        run_id = str(manifest.get("run_id", self.directory.name))
        (scope,) = scopes(self._db)
        decoder = self._reading()
        # The events and labels are read on other threads while the conversations are built.
        read_events, read_labels = whole_reads(self._db, scope)
        conversations = conversations_frame(
            self._db, decoder, scope, manifest, run_id, everything=True
        )
        events = events_frame(self._db, decoder, scope, run_id, everything=True, read=read_events)
        labels = labels_frame(self._db, decoder, scope, run_id, everything=True, read=read_labels)
        path = self.directory / DATABASE_NAME
        return RunTables(
            events,
            labels,
            conversations,
            manifest,
            event_meta=lambda e: _later(path, "event_meta", e),
            prompts=lambda: _later(path, "prompts", run_id),
            answer_counts=self.answer_quality(),
        )

    def batches(self, size: int) -> Iterator[RunTables]:
        """The tidy tables in batches of `size` conversations, in run order, each with its
        events' meta and prompts (what `export` writes, with memory flat in the run's size).
        Each batch's manifest is the run's, with `run_state`."""
        from backchannel.analysis import RunTables
        from backchannel.store._frames import (
            conversations_frame,
            event_meta,
            events_frame,
            labels_frame,
            prompts_frame,
            scopes,
        )

        manifest = {**self.manifest(), "run_state": self.run_state()}
        run_id = str(manifest.get("run_id", self.directory.name))
        decoder = self._reading()
        for scope in scopes(self._db, size):
            events = events_frame(self._db, decoder, scope, run_id, everything=False)
            events = events.assign(meta=event_meta(self._db, decoder, events, everything=False))
            yield RunTables(
                events,
                labels_frame(self._db, decoder, scope, run_id, everything=False),
                conversations_frame(self._db, decoder, scope, manifest, run_id, everything=False),
                manifest,
                prompts=prompts_frame(self._db, decoder, scope, run_id, everything=False),
            )

    # plumbing -----------------------------------------------------------------------------
    def _transaction(self, writer: Writer | None = None) -> _Transaction:
        return _Transaction(self._db, writer)

    def _writing(self) -> Writer:
        if self._writer is None:
            self._writer = Writer(self._db)
        return self._writer

    def _reading(self) -> Decoder:
        if self._decoder is None:
            self._decoder = Decoder(self._db)
        else:
            self._decoder.refresh(self._db)
        return self._decoder

    def close(self) -> None:
        """Close the store; a writer then checks the whole file once and records it sound."""
        self._db.close()
        if not self.readonly:
            record_sound(self.directory / DATABASE_NAME)
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def lock_held(directory: Path) -> bool:
    """Whether a process holds the run directory's lock (taken by `RunStore.lock`), asked
    without writing anything: a missing or unreadable lock file is no holder."""
    import fcntl

    try:
        handle = open(directory / LOCK_NAME)  # noqa: SIM115 - closed below
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


def _event_record(event: Event) -> EventRecord:
    """An event's stored columns (in `EVENT_STORED` order), meta and prompt."""
    meta, prompt = split_meta(dict(event.meta))
    values = tuple(_stored_value(event, c.name) for c in EVENT_STORED)
    return EventRecord(values, meta, prompt)


def _stored_value(event: Event, name: str) -> Any:
    value = getattr(event, name)
    if name == "value":
        return None if value is None else _json(value)
    if name == "cached":
        return int(value)
    return value


def _later(path: Path, part: str, arg: Any) -> Any:
    """The events' meta (for the frame `arg`) or the prompts frame (of run `arg`), read from a
    connection of their own: the tables outlive the store that made them."""
    from backchannel.store._frames import event_meta, prompts_frame, scopes

    db = _open_readonly(path)
    try:
        decoder = Decoder(db)
        if part == "event_meta":
            return event_meta(db, decoder, arg, everything=True)
        (scope,) = scopes(db)
        return prompts_frame(db, decoder, scope, arg, everything=True)
    finally:
        db.close()


class _Transaction:
    def __init__(self, db: sqlite3.Connection, writer: Writer | None) -> None:
        self._db = db
        self._writer = writer

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        committed = False
        try:
            self._db.execute("COMMIT" if kind is None else "ROLLBACK")
            committed = kind is None
        finally:
            if self._writer is not None:
                self._writer.settled(committed)
