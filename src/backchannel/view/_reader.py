"""Read one run directory read-only, a page or a conversation at a time (never all events).

Every query goes to SQLite, so a run that is still being written shows each conversation as
soon as its transaction commits, and memory does not grow with the run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
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
from backchannel.view._figures import Figures
from backchannel.view._query import BadQuery, ListQuery, where_clause

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
        self._metric_cache: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._view: Figures | None = None

    def _open(self) -> None:
        """Connect read-only, writing nothing beside the file: immutable while no run writes
        it (no write-ahead log), read-only with the log while one does."""
        if StoredConversations.needs_upgrade(self._path):
            try:
                RunStore(self.directory).close()  # brings an older store up to date, once
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

    def where(self, query: ListQuery) -> tuple[str, list[Any]]:
        """The WHERE clause of a page query, over `conversations c` of this store (its text
        search calls the store's `document_text`, registered on this connection)."""
        self._stored  # noqa: B018 - registers document_text on the connection
        return where_clause(query, self.factors)

    def _file_stamp(self) -> tuple[bool, int, int]:
        try:
            stat = self._path.stat()
        except OSError:
            raise RunUnreadable(
                f"{self._path} is gone: the run store was deleted or moved while the viewer "
                "showed it; restore it, or start `backchannel view` again on a run directory"
            ) from None
        return Path(f"{self._path}-wal").exists(), stat.st_size, stat.st_mtime_ns

    def _fresh(self) -> sqlite3.Connection:
        """The connection, reopened when the file or its log changed since it was opened (an
        immutable connection would not see what a resumed or finished run wrote)."""
        if self._file_stamp() != self._stamp:
            self._db.close()
            self._open()
        return self._db

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
    def _figures(self) -> Figures:
        """The paradigm's view (looked up once the manifest names the paradigm)."""
        if self._view is None or self._view.paradigm != self.paradigm:
            self._view = Figures(self.paradigm)
        return self._view

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
        from backchannel.view._headline import headline_metrics

        try:
            return headline_metrics(store.tables())
        finally:
            store.close()

    def divergent(self, judge: str | None = None) -> dict[str, Any]:
        """The run's divergent turns (what the metrics' divergence section counts), through the
        run store opened read-only; {"error": why} when there are none to read."""
        try:
            store = RunStore(self.directory, readonly=True)
        except BackchannelError as error:
            return {"error": str(error)}
        from backchannel.view._divergent import divergent_of

        try:
            return divergent_of(store.tables(), judge)
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
            "columns": [_column_json(c) for c in self._figures.columns(manifest)],
        }

    # conversations ------------------------------------------------------------------------
    def page(self, query: ListQuery) -> dict[str, Any]:
        """One page of the conversations table, with each row's per-conversation figures.

        Sorting by a figure or filtering by one (`m.KEY`) needs the figures of every
        conversation the other filters keep; they are computed once and kept (see `_ranked`).
        """
        self._fresh()
        where, params = self.where(query)
        order = query.order_by(self.factors)
        columns = (
            "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, "
            "position, finished_at FROM conversations c"
        )
        if query.metric is None and not query.figures:
            total = self._db.execute(
                f"SELECT COUNT(*) FROM conversations c {where}", params
            ).fetchone()[0]
            rows = self._db.execute(
                f"{columns} {where} ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.limit, query.offset],
            ).fetchall()
        else:
            total, ids = self._ranked(query, where, params, order)
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

    def _ranked(
        self, query: ListQuery, where: str, params: list[Any], order: str
    ) -> tuple[int, list[str]]:
        """The total and the ids of one page, filtered by figures and ordered by the sort;
        conversations without a value of the sorted figure always come last.

        This needs every filtered conversation's figures, so they are computed once per
        conversation (again only when it is re-committed) and kept: a few values each, never
        the events.
        """
        keys = {c.key for c in self._figures.columns(self.manifest)}
        for key in [*query.figures, *([query.metric] if query.metric else [])]:
            if key not in keys:
                known = ", ".join(sorted(keys)) or "(none)"
                raise BadQuery(f"this run's view has no figure {key!r}; use one of {known}")
        # Ties of a sorted figure (and missing values) keep run order in either direction.
        base = "c.position" if query.metric is not None else order
        rows = self._db.execute(
            f"SELECT conversation_id, status, finished_at FROM conversations c {where} "
            f"ORDER BY {base}",
            params,
        ).fetchall()
        self._add_metrics([{"conversation_id": r[0], "finished_at": r[2]} for r in rows])
        wanted = {k: json.loads(v) for k, v in query.figures.items()}
        kept = [
            r[0]
            for r in rows
            if all(
                _same(self._metric_cache[r[0]][1]["metrics"].get(k), v) for k, v in wanted.items()
            )
        ]
        if query.metric is None:
            return len(kept), kept[query.offset : query.offset + query.limit]
        key = query.metric
        values = [(cid, self._metric_cache[cid][1]["metrics"].get(key)) for cid in kept]
        present = sorted(
            (v for v in values if v[1] is not None),
            key=lambda v: _sortable(v[1]),
            reverse=query.descending,
        )
        ordered = [*present, *(v for v in values if v[1] is None)]
        return len(kept), [cid for cid, _ in ordered[query.offset : query.offset + query.limit]]

    def _add_metrics(self, conversations: list[dict[str, Any]]) -> None:
        """Each conversation's figures (`metrics`) and badges, by the paradigm's view.

        Figures are kept per conversation (a few values each) and computed again only when it
        was committed again or its labels changed (a `judge` run while the viewer serves).
        """
        if not conversations or not self._figures.has_rows:
            for c in conversations:
                c["metrics"], c["badges"] = {}, []
            return
        ids = [c["conversation_id"] for c in conversations]
        stamps = self._stamps(ids)
        stale = [
            cid for cid in ids if self._metric_cache.get(cid, (None, {}))[0] != stamps.get(cid)
        ]
        for start in range(0, len(stale), _BATCH):
            chunk = stale[start : start + _BATCH]
            for cid, figures in self._compute(chunk).items():
                self._metric_cache[cid] = (stamps.get(cid), figures)
        for c in conversations:
            found = self._metric_cache.get(c["conversation_id"], (None, {}))[1]
            c["metrics"] = dict(found.get("metrics", {}))
            c["badges"] = list(found.get("badges", []))

    def _stamps(self, ids: list[str]) -> dict[str, tuple[Any, ...]]:
        """What a conversation's figures depend on: when it was committed, and its labels."""
        found: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(ids), _BATCH):
            found.update(self._stored.stamps(ids[start : start + _BATCH]))
        return found

    def _compute(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The view's figures of these conversations, read a table at a time."""
        rows = self._stored.conversation_rows(ids)
        fields = (
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
            "model",
            *(("text",) if "text" in self._figures.reads else ()),
        )
        events = []
        for cid, found in self._stored.events(ids, fields).items():
            metas = self._stored.event_meta(cid) if "meta" in self._figures.reads else {}
            for event in found:
                event["conversation_id"] = cid
                if "meta" in self._figures.reads:
                    event["meta"] = metas.get(int(event["seq"]), "{}")
                events.append(event)
        labels = [
            {"conversation_id": cid, "event_seq": seq, **label}
            for cid, by_seq in self._labels_of(ids, with_text=False).items()
            for seq, found_labels in by_seq.items()
            for label in found_labels
        ]
        return self._figures.rows(self.manifest, rows, events, labels, self.primary_judge())

    def _labels_of(
        self, ids: Iterable[str], *, with_text: bool
    ) -> dict[str, dict[int, list[dict[str, Any]]]]:
        return self._stored.labels(list(ids), with_text=with_text)

    def conversation(
        self, conversation_id: str, judge: str | None = None, *, judges: bool = False
    ) -> dict[str, Any] | None:
        """A conversation with all its events and labels, its figures and its view's page for
        `judge` (default: the run's judge); prompts are left to `event`. With `judges`, also
        `pages`: the page under every other judge that labelled the conversation."""
        self._fresh()
        row = self._db.execute(
            "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, "
            "position, finished_at FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        raw = {**dict(row), "meta": self._stored.meta(conversation_id)}
        conversation = self._row(row)
        conversation["meta"] = _decode(raw["meta"]) or {}
        labels = self._labels_of([conversation_id], with_text=True).get(conversation_id, {})
        stored = self._stored.events([conversation_id])[conversation_id]
        metas = self._stored.event_meta(conversation_id)
        prompts = self._stored.prompts(conversation_id)
        events = [
            self._event(r, metas, prompts, labels.get(int(r["seq"]), []), with_prompt=False)
            for r in stored
        ]
        for r, e in zip(stored, events, strict=True):
            # The view reads the event's meta decoded and without its prompt (never needed).
            r.update(conversation_id=conversation_id, meta=e["meta"])
        label_rows = [
            {"conversation_id": conversation_id, "event_seq": seq, **label}
            for seq, found in labels.items()
            for label in found
        ]
        primary = self.primary_judge()
        chosen = judge or primary
        others = sorted({str(x["judge"]) for x in label_rows} - {chosen}) if judges else []
        figures, pages = self._figures.page(
            self.manifest, raw, stored, label_rows, [chosen, *others]
        )
        conversation.update(figures.get(conversation_id, {"metrics": {}, "badges": []}))
        page = pages[0]
        divergent = self._divergent_in(raw, stored, label_rows, judge)
        found: dict[str, Any] = {
            "paradigm": self.paradigm,
            "primary_judge": primary,
            "conversation": conversation,
            "events": events,
            "round_labels": self._figures.round_labels(int(e["round"]) for e in events),
            "page": page,
            "divergent": divergent,
        }
        if judges and page is not None:
            found["pages"] = {
                other: alternative
                for other, alternative in zip(others, pages[1:], strict=True)
                if alternative is not None and {**alternative, "judge": chosen} != page
            }
        return found

    def _divergent_in(
        self,
        conversation: Mapping[str, Any],
        events: list[dict[str, Any]],
        labels: list[dict[str, Any]],
        judge: str | None,
    ) -> dict[str, Any]:
        """The divergent turns of one finished conversation ({"turns": []} for another)."""
        if conversation.get("status") != "done":
            return {"turns": []}
        from backchannel.view._divergent import divergent_of
        from backchannel.view._tables import tables_of

        return divergent_of(tables_of(self.manifest, [conversation], events, labels), judge)

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


_BATCH = 500
# The event fields the API returns, in its order (`meta`, `reasoning`, `retries`, `has_prompt`,
# [`prompt`], `labels` follow).
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


def _column_json(column: Any) -> dict[str, Any]:
    return {"key": column.key, "title": column.title, "help": column.help, "shown": column.shown}


def _same(value: Any, wanted: Any) -> bool:
    """A figure equals a filter's value (as JSON: 1 and 1.0 alike, "1" and 1 not)."""
    return json.dumps(value, sort_keys=True) == json.dumps(wanted, sort_keys=True) or (
        isinstance(value, int | float)
        and isinstance(wanted, int | float)
        and not isinstance(value, bool)
        and not isinstance(wanted, bool)
        and float(value) == float(wanted)
    )


def _sortable(value: Any) -> tuple[int, Any]:
    """Numbers before texts, so a column mixing both still sorts."""
    if isinstance(value, bool | int | float):
        return (0, float(value))
    return (1, str(value))
