"""Reads of a few conversations at a time (the viewer's): rows with their names decoded,
documents decompressed only when asked for."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from backchannel._sqlite import connect_readonly
from backchannel.store._codec import DocumentError, parse_records
from backchannel.store._migrate import moving
from backchannel.store._rows import Decoder, conversation_meta
from backchannel.store._schema import CODED, EVENT_STORED, SCHEMA_VERSION

EVENT_FIELDS = tuple(c.name for c in EVENT_STORED)
"""The event fields a lookup returns (every tidy column but the keys and `meta`)."""
_CONVERSATION_FIELDS = (
    "conversation_id",
    "cell_key",
    "cell",
    "item_id",
    "replicate",
    "seed",
    "status",
    "error",
)
_KEEP = 8
"""Decoded prompt documents kept (a page that opens one event after another reads one)."""


class StoredConversations:
    """Per-conversation lookups on an open, read-only connection to a current store.

    The connection gains the SQL function `document_text(dictionary, data)`, the text of a
    stored document, so a query can search a conversation's meta."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._decoder = Decoder(db)
        self._prompts: OrderedDict[int, dict[int, str]] = OrderedDict()
        db.create_function("document_text", 2, self._document_text, deterministic=True)

    @staticmethod
    def needs_upgrade(path: Path) -> bool:
        """Whether the store at `path` must be brought up to this version before reading."""
        db = connect_readonly(path)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            return 0 < version < SCHEMA_VERSION or moving(db)
        finally:
            db.close()

    def _document_text(self, dictionary: int | None, data: bytes) -> str:
        try:
            return self._decoder.text(data, dictionary)
        except DocumentError:
            return ""

    def _convs(self, ids: Sequence[str]) -> dict[str, int]:
        marks = ",".join("?" * len(ids))
        rows = self._db.execute(
            f"SELECT conversation_id, conv FROM conversations WHERE conversation_id IN ({marks})",
            list(ids),
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def _decoded(self, names: Sequence[str], row: Iterable[Any]) -> dict[str, Any]:
        found = dict(zip(names, row, strict=True))
        for name in names:
            if name in CODED:
                found[name] = self._decoder.name(found[name])
        return found

    def events(
        self, ids: Sequence[str], fields: Sequence[str] = EVENT_FIELDS
    ) -> dict[str, list[dict[str, Any]]]:
        """conversation id -> its events (the `fields` asked for), in seq order."""
        convs = self._convs(ids)
        found: dict[str, list[dict[str, Any]]] = {cid: [] for cid in ids}
        if not convs:
            return found
        by_conv = {conv: cid for cid, conv in convs.items()}
        marks = ",".join("?" * len(by_conv))
        for row in self._db.execute(
            f"SELECT conv, {', '.join(fields)} FROM events WHERE conv IN ({marks}) "
            "ORDER BY conv, seq",
            list(by_conv),
        ):
            found[by_conv[row[0]]].append(self._decoded(fields, tuple(row)[1:]))
        return found

    def event(self, conversation_id: str, seq: int) -> dict[str, Any] | None:
        """One event's fields, or None."""
        conv = self._convs([conversation_id]).get(conversation_id)
        if conv is None:
            return None
        row = self._db.execute(
            f"SELECT {', '.join(EVENT_FIELDS)} FROM events WHERE conv = ? AND seq = ?",
            (conv, seq),
        ).fetchone()
        return None if row is None else self._decoded(EVENT_FIELDS, tuple(row))

    def labels(
        self, ids: Sequence[str], *, with_text: bool
    ) -> dict[str, dict[int, list[dict[str, Any]]]]:
        """conversation id -> event seq -> its labels (judge, label, status; text and model
        with `with_text`), ordered by judge."""
        convs = self._convs(ids)
        if not convs:
            return {}
        by_conv = {conv: cid for cid, conv in convs.items()}
        marks = ",".join("?" * len(by_conv))
        fields = (
            "event_seq",
            "judge",
            "label",
            "status",
            *(("text", "model") if with_text else ()),
        )
        found: dict[str, dict[int, list[dict[str, Any]]]] = {}
        rows = self._db.execute(
            f"SELECT conv, {', '.join(fields)} FROM labels WHERE conv IN ({marks})",
            list(by_conv),
        ).fetchall()
        decoded = [(by_conv[r[0]], self._decoded(fields, tuple(r)[1:])) for r in rows]
        decoded.sort(key=lambda x: (x[0], x[1]["event_seq"], x[1]["judge"]))
        for cid, label in decoded:
            seq = int(label.pop("event_seq"))
            found.setdefault(cid, {}).setdefault(seq, []).append(label)
        return found

    def stamps(self, ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """conversation id -> (when it was committed, how many labels were written to it):
        what changes when the conversation or its labels do."""
        marks = ",".join("?" * len(ids))
        rows = self._db.execute(
            "SELECT conversation_id, finished_at, labelled FROM conversations "
            f"WHERE conversation_id IN ({marks})",
            list(ids),
        ).fetchall()
        return {str(r[0]): (r[1], r[2]) for r in rows}

    def conversation_rows(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The conversations' columns as the tidy table has them (meta as JSON text)."""
        marks = ",".join("?" * len(ids))
        rows = self._db.execute(
            "SELECT c.conversation_id, c.cell_key, c.cell, c.item_id, c.replicate, c.seed, "
            "c.status, c.error, c.replica_calls, m.dictionary, m.data FROM conversations c "
            "LEFT JOIN conversation_meta m ON m.conv = c.conv "
            f"WHERE c.conversation_id IN ({marks})",
            list(ids),
        ).fetchall()
        found = []
        for row in rows:
            values = tuple(row)
            document = None if values[10] is None else self._decoder.text(values[10], values[9])
            item = dict(zip(_CONVERSATION_FIELDS, values[:8], strict=True))
            item["meta"] = conversation_meta(document, values[8])
            found.append(item)
        return found

    def meta(self, conversation_id: str) -> str | None:
        """A conversation's meta JSON, exactly as stored, or None."""
        row = self._db.execute(
            "SELECT c.replica_calls, m.dictionary, m.data FROM conversations c "
            "LEFT JOIN conversation_meta m ON m.conv = c.conv WHERE c.conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        document = None if row[2] is None else self._decoder.text(row[2], row[1])
        return conversation_meta(document, row[0])

    def event_meta(self, conversation_id: str) -> dict[int, str]:
        """seq -> meta JSON of a conversation's events that have any."""
        return self._records("event_meta", conversation_id)

    def prompts(self, conversation_id: str) -> dict[int, str]:
        """seq -> prompt JSON of a conversation's model calls."""
        conv = self._convs([conversation_id]).get(conversation_id)
        if conv is None:
            return {}
        if conv not in self._prompts:
            self._prompts[conv] = self._records("prompts", conversation_id)
            while len(self._prompts) > _KEEP:
                self._prompts.popitem(last=False)
        return self._prompts[conv]

    def _records(self, part: str, conversation_id: str) -> dict[int, str]:
        row = self._db.execute(
            f"SELECT d.dictionary, d.data FROM {part} d JOIN conversations c ON c.conv = d.conv "
            "WHERE c.conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return {}
        return dict(parse_records(self._decoder.text(row[1], row[0])))
