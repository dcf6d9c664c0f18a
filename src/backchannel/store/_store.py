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
from typing import IO, Any

import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, RunTables
from backchannel.backends import Usage, UsageMeter
from backchannel.engine import ConversationSpec, Event, Label
from backchannel.errors import RunDirectoryError
from backchannel.store._schema import migrate

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


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class RunStore:
    """Open (or create) the store of one run directory."""

    def __init__(self, directory: Path, *, create: bool = False) -> None:
        self.directory = directory
        path = directory / DATABASE_NAME
        if not path.exists() and not create:
            raise RunDirectoryError(
                f"{directory} is not a run directory (no {DATABASE_NAME}); "
                "create one with `backchannel run EXPERIMENT.yaml -o DIR`"
            )
        directory.mkdir(parents=True, exist_ok=True)
        self._lock: IO[str] | None = None
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=10000")
        try:
            migrate(self._db)
        except RuntimeError as error:
            self._db.close()
            raise RunDirectoryError(f"{directory}: {error}") from None

    def lock(self) -> None:
        """Hold the run directory for this process; a second `run` on it is refused."""
        import fcntl

        handle = open(self.directory / ".lock", "w")  # noqa: SIM115 - held until close
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
                        _json(e.meta),
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
        meter = UsageMeter()
        for row in self._db.execute(
            "SELECT model, SUM(calls), SUM(cache_hits), SUM(prompt_tokens), "
            "SUM(completion_tokens), "
            "SUM(retries), SUM(reasks), SUM(failures), SUM(parse_failures), SUM(cost), "
            "SUM(reasoning_tokens), SUM(truncated) FROM usage GROUP BY model"
        ):
            meter.model(row[0]).add(Usage(*row[1:]))
        return meter

    # tables -------------------------------------------------------------------------------
    def tables(self) -> RunTables:
        """The tidy tables of everything stored (see docs/data-schema.md)."""
        manifest = self.manifest()
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
        events = pd.read_sql_query("SELECT * FROM events", self._db)
        events.insert(0, "run_id", run_id)
        events = events[EVENT_COLUMNS]
        events["cached"] = events["cached"].astype(bool)
        events["turn"] = events["turn"].astype("Int64")
        events = _in_conversation_order(events, order, "seq")
        labels = pd.read_sql_query("SELECT * FROM labels", self._db)
        labels.insert(0, "run_id", run_id)
        labels = _in_conversation_order(labels, order, "event_seq", "judge")
        return RunTables(events, labels, conversations, manifest)

    # plumbing -----------------------------------------------------------------------------
    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None


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
