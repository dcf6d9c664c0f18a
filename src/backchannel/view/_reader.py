"""Read one run directory read-only, a page or a conversation at a time (never all events).

Every query goes to SQLite, so a run that is still being written shows each conversation as
soon as its transaction commits, and memory does not grow with the run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from backchannel._sqlite import connect_readonly, damage
from backchannel.errors import BackchannelError, RunDirectoryError
from backchannel.store import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    RunStore,
    StoredConversations,
    usage_by_model,
)
from backchannel.view._headline import headline_metrics
from backchannel.view._query import BadQuery, ListQuery, where_clause
from backchannel.view._views import view_for

_TABLES = {
    "manifest",
    "conversations",
    "events",
    "labels",
    "usage",
    "names",
    "dictionaries",
    "conversation_meta",
    "event_meta",
    "prompts",
}
# Usage figures the run page shows per model.
_USAGE_SHOWN = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "reasks",
    "failures",
    "parse_failures",
    "cost",
)
_SECRET_KEYS = ("api_key", "key", "token", "password", "secret", "authorization")


class RunUnreadable(RunDirectoryError):
    """The run store cannot be read (missing, damaged, or from a newer backchannel)."""


def _decode(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _strip_secrets(value: Any) -> Any:
    """Endpoint settings without keys: any field whose name holds key/token/secret goes."""
    if isinstance(value, dict):
        return {
            k: _strip_secrets(v)
            for k, v in value.items()
            if not any(s in str(k).lower() for s in _SECRET_KEYS) or str(k).endswith("_env")
        }
    if isinstance(value, list):
        return [_strip_secrets(v) for v in value]
    return value


class RunReader:
    """One run directory opened read-only; every method answers from a fresh query."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        path = directory / DATABASE_NAME
        if not directory.is_dir():
            raise RunUnreadable(
                f"{directory} is not a directory; pass a run directory written by "
                "`backchannel run EXPERIMENT.yaml -o DIR`"
            )
        if not path.is_file():
            raise RunUnreadable(
                f"{directory} is not a run directory (no {DATABASE_NAME}); pass the -o directory "
                "of a `backchannel run`"
            )
        problem = damage(path)
        if problem is not None:
            raise RunUnreadable(
                f"{path} {problem}: the run store is damaged; restore it from a copy or re-run "
                "the experiment"
            )
        self._path = path
        try:
            self._open()
            self._check()
        except sqlite3.DatabaseError as error:
            raise RunUnreadable(
                f"{path} cannot be read ({error}); the run store is damaged: restore it from a "
                "copy or re-run the experiment"
            ) from None
        self._manifest = self._read_manifest()
        self._metric_cache: dict[str, tuple[float, dict[str, Any]]] = {}

    def _open(self) -> None:
        """Connect read-only, writing nothing beside the file: immutable while no run writes
        it (no write-ahead log), read-only with the log while one does. A store of an older
        schema is brought up to date first (the one write the viewer makes)."""
        if StoredConversations.needs_upgrade(self._path):
            try:
                RunStore(self.directory).close()
            except BackchannelError as error:
                raise RunUnreadable(str(error)) from None
        self._stamp = self._file_stamp()
        self._db = connect_readonly(self._path)
        self._db.row_factory = sqlite3.Row
        self._lookups: StoredConversations | None = None

    @property
    def _stored(self) -> StoredConversations:
        """The store's per-conversation reads on the current connection."""
        if self._lookups is None:
            self._lookups = StoredConversations(self._db)
        return self._lookups

    def _file_stamp(self) -> tuple[bool, int, int]:
        stat = self._path.stat()
        return Path(f"{self._path}-wal").exists(), stat.st_size, stat.st_mtime_ns

    def _fresh(self) -> sqlite3.Connection:
        """The connection, reopened when the file or its log changed since it was opened (an
        immutable connection would not see what a resumed or finished run wrote)."""
        if self._file_stamp() != self._stamp:
            self._db.close()
            self._open()
        return self._db

    def where(self, query: ListQuery) -> tuple[str, list[Any]]:
        """The WHERE clause of a page query, over `conversations c` of this store (its text
        search calls the store's `document_text` on this connection)."""
        self._stored  # noqa: B018 - registers document_text on the connection
        return where_clause(query, self.factors)

    def _check(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise RunUnreadable(
                f"{self.directory} has run-store schema version {version}, newer than this "
                f"backchannel ({SCHEMA_VERSION}); upgrade backchannel to view it"
            )
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        missing = sorted(_TABLES - names)
        if missing:
            raise RunUnreadable(
                f"{self.directory / DATABASE_NAME} lacks the table(s) {', '.join(missing)}; it "
                "is not a backchannel run store: pass a run directory"
            )

    def _read_manifest(self) -> dict[str, Any]:
        return {r[0]: _decode(r[1]) for r in self._db.execute("SELECT key, value FROM manifest")}

    def close(self) -> None:
        self._db.close()

    @property
    def db(self) -> sqlite3.Connection:
        """The read-only connection."""
        return self._fresh()

    def headline(self) -> dict[str, Any]:
        """The run's headline metrics, through the run store opened read-only."""
        try:
            store = RunStore(self.directory, readonly=True)
        except BackchannelError as error:  # damaged since the viewer opened it: say so
            return {"error": str(error)}
        try:
            return headline_metrics(store.tables())
        finally:
            store.close()

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id", self.directory.name))

    # run ----------------------------------------------------------------------------------
    @property
    def manifest(self) -> dict[str, Any]:
        if not self._manifest:  # a run that has just started writes its manifest first
            self._manifest = self._read_manifest()
        return self._manifest

    @property
    def paradigm(self) -> str:
        return str(self.manifest.get("paradigm", ""))

    @property
    def factors(self) -> list[str]:
        return [str(f) for f in self.manifest.get("factors", [])]

    def levels(self) -> dict[str, list[Any]]:
        """Each factor's declared levels (from the experiment as resolved)."""
        resolved = self.manifest.get("config_resolved")
        declared = resolved.get("factors", {}) if isinstance(resolved, dict) else {}
        return {f: list(declared.get(f, [])) for f in self.factors}

    def primary_judge(self) -> str | None:
        """The judge the paradigm's metrics use by default (settings.judge.name), if any."""
        resolved = self.manifest.get("config_resolved")
        settings = resolved.get("settings", {}) if isinstance(resolved, dict) else {}
        judge = settings.get("judge") if isinstance(settings, dict) else None
        name = judge.get("name") if isinstance(judge, dict) else None
        return str(name) if name else None

    def summary(self) -> dict[str, Any]:
        """Paradigm, design, models and endpoints (no keys), counts and usage of the run."""
        self._fresh()
        manifest = self.manifest
        counts = {"done": 0, "incomplete": 0, "failed": 0}
        for status, n in self._db.execute(
            "SELECT status, COUNT(*) FROM conversations GROUP BY status"
        ):
            counts[str(status)] = int(n)
        meter = usage_by_model(self._db)
        usage = [
            {"model": model, **{key: getattr(meter.by_model[model], key) for key in _USAGE_SHOWN}}
            for model in sorted(meter.by_model)
        ]
        resolved = manifest.get("config_resolved")
        endpoints = resolved.get("endpoints", []) if isinstance(resolved, dict) else []
        view = view_for(self.paradigm)
        return {
            "run_id": self.run_id,
            "name": manifest.get("name", ""),
            "directory": str(self.directory),
            "paradigm": self.paradigm,
            "factors": self.levels(),
            "endpoints": _strip_secrets(endpoints),
            "seed": manifest.get("seed"),
            "created_at": manifest.get("created_at"),
            "package_version": manifest.get("package_version"),
            "git_commit": manifest.get("git_commit"),
            "counts": {**counts, "total": sum(counts.values())},
            "usage": usage,
            "primary_judge": self.primary_judge(),
            "columns": [c.as_json() for c in view.columns],
        }

    # conversations ------------------------------------------------------------------------
    def page(self, query: ListQuery) -> dict[str, Any]:
        """One page of the conversations table, with each row's per-conversation metrics."""
        self._fresh()
        where, params = self.where(query)
        total = self._db.execute(
            f"SELECT COUNT(*) FROM conversations c {where}", params
        ).fetchone()[0]
        order = query.order_by(self.factors)
        columns = (
            "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, "
            "position, finished_at FROM conversations c"
        )
        if query.metric is None:
            rows = self._db.execute(
                f"{columns} {where} ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.limit, query.offset],
            ).fetchall()
        else:
            ids = self._sorted_by_metric(query, where, params)
            marks = ",".join("?" * len(ids))
            found = {
                r["conversation_id"]: r
                for r in self._db.execute(
                    f"{columns} WHERE conversation_id IN ({marks})", ids
                ).fetchall()
            }
            rows = [found[i] for i in ids if i in found]
        conversations = [self._row(r) for r in rows]
        self._add_metrics(conversations)
        return {
            "total": int(total),
            "offset": query.offset,
            "limit": query.limit,
            "conversations": conversations,
        }

    def _row(self, row: sqlite3.Row) -> dict[str, Any]:
        item = dict(row)
        item["cell"] = _decode(item["cell"]) or {}
        return item

    def _sorted_by_metric(self, query: ListQuery, where: str, params: list[Any]) -> list[str]:
        """The ids of one page ordered by a metric column; missing values always come last.

        Sorting needs every filtered conversation's figure, so figures are computed once per
        conversation (again only when it is re-committed) and kept: a few numbers each, never
        the events.
        """
        view = view_for(self.paradigm)
        key = query.metric
        if key not in {c.key for c in view.columns}:
            known = ", ".join(f"metric:{c.key}" for c in view.columns) or "(none)"
            raise BadQuery(f"this run's view has no metric {key!r}; sort by one of {known}")
        rows = self._db.execute(
            f"SELECT conversation_id, status, finished_at FROM conversations c {where} "
            "ORDER BY c.position",
            params,
        ).fetchall()
        stale = [
            {"conversation_id": r[0], "status": r[1]}
            for r in rows
            if self._metric_cache.get(r[0], (None, {}))[0] != r[2]
        ]
        finished = {r[0]: r[2] for r in rows}
        for start in range(0, len(stale), 200):
            chunk = stale[start : start + 200]
            self._add_metrics(chunk)
            for c in chunk:
                scalars = {k: c["metrics"].get(k) for k in (x.key for x in view.columns)}
                self._metric_cache[c["conversation_id"]] = (finished[c["conversation_id"]], scalars)
        values: list[tuple[str, Any]] = [(r[0], self._metric_cache[r[0]][1].get(key)) for r in rows]
        present = sorted(
            (v for v in values if v[1] is not None), key=lambda v: v[1], reverse=query.descending
        )
        ordered = [*present, *(v for v in values if v[1] is None)]
        return [cid for cid, _ in ordered[query.offset : query.offset + query.limit]]

    def _add_metrics(self, conversations: list[dict[str, Any]]) -> None:
        view = view_for(self.paradigm)
        if not view.columns or not conversations:
            for c in conversations:
                c["metrics"] = {}
            return
        ids = [c["conversation_id"] for c in conversations]
        events = self._stored.events(ids, _METRIC_KEYS)
        for found in events.values():
            for event in found:
                event["value"] = _decode(event["value"])
        labels = self._labels_of(ids, with_text=False)
        judge = self.primary_judge()
        for c in conversations:
            cid = c["conversation_id"]
            meta = self._meta_of(cid)
            c["metrics"] = view.row_metrics(
                meta, events[cid], labels.get(cid, {}), judge, status=c["status"]
            )

    def _meta_of(self, conversation_id: str) -> dict[str, Any]:
        meta = _decode(self._stored.meta(conversation_id))
        return meta if isinstance(meta, dict) else {}

    def _labels_of(
        self, ids: Iterable[str], *, with_text: bool
    ) -> dict[str, dict[int, list[dict[str, Any]]]]:
        return self._stored.labels(list(ids), with_text=with_text)

    def conversation(self, conversation_id: str) -> dict[str, Any] | None:
        """A conversation with all its events and labels; prompts are left to `event`."""
        self._fresh()
        row = self._db.execute(
            "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, "
            "position, finished_at FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        conversation = self._row(row)
        conversation["meta"] = _decode(self._stored.meta(conversation_id)) or {}
        labels = self._labels_of([conversation_id], with_text=True).get(conversation_id, {})
        metas = self._stored.event_meta(conversation_id)
        prompts = self._stored.prompts(conversation_id)
        events = [
            self._event(e, metas, prompts, labels.get(int(e["seq"]), []), with_prompt=False)
            for e in self._stored.events([conversation_id])[conversation_id]
        ]
        view = view_for(self.paradigm)
        conversation["metrics"] = view.row_metrics(
            conversation["meta"],
            [{k: e[k] for k in _METRIC_KEYS} for e in events],
            {e["seq"]: e["labels"] for e in events if e["labels"]},
            self.primary_judge(),
            status=conversation["status"],
        )
        return {
            "paradigm": self.paradigm,
            "primary_judge": self.primary_judge(),
            "conversation": conversation,
            "events": events,
            "details": view.conversation_details(conversation, events),
        }

    def event(self, conversation_id: str, seq: int) -> dict[str, Any] | None:
        """One event with its prompt (the messages the model received) and every judge label."""
        self._fresh()
        found = self._stored.event(conversation_id, seq)
        if found is None:
            return None
        labels = self._labels_of([conversation_id], with_text=True).get(conversation_id, {})
        metas = self._stored.event_meta(conversation_id)
        prompts = self._stored.prompts(conversation_id)
        return self._event(found, metas, prompts, labels.get(seq, []), with_prompt=True)

    def _event(
        self,
        found: dict[str, Any],
        metas: dict[int, str],
        prompts: dict[int, str],
        labels: list[dict[str, Any]],
        *,
        with_prompt: bool,
    ) -> dict[str, Any]:
        event = {k: found[k] for k in _EVENT_KEYS}
        event["value"] = _decode(event["value"])
        event["cached"] = bool(event["cached"])
        seq = int(event["seq"])
        meta = _decode(metas.get(seq))
        meta = meta if isinstance(meta, dict) else {}
        stored_prompt = prompts.get(seq)
        event["meta"] = meta
        event["reasoning"] = found["reasoning"]
        # Transport retries of the call; None where the run did not record them (older runs).
        retries = meta.pop("retries", None)
        event["retries"] = retries if isinstance(retries, int) else None
        event["has_prompt"] = stored_prompt is not None
        if with_prompt:
            prompt = _decode(stored_prompt) or []
            event["prompt"] = [{"role": str(m[0]), "content": str(m[1])} for m in prompt]
        event["labels"] = labels
        return event

    def conversation_ids(self) -> list[str]:
        """Every conversation id in run order (for the static copy, which writes them all)."""
        rows = self._db.execute("SELECT conversation_id FROM conversations ORDER BY position")
        return [str(r[0]) for r in rows]


# The event fields the API returns, in its order (`reasoning`, `retries`, `meta`, `has_prompt`,
# `labels` follow).
_EVENT_KEYS = (
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
)
_METRIC_KEYS = (
    "seq",
    "kind",
    "name",
    "round",
    "turn",
    "agent",
    "role",
    "channel",
    "value",
    "status",
)
