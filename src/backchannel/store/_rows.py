"""One conversation as rows of the compact store, and back (the store's only format knowledge).

`Writer` codes names and compresses documents inside the caller's transaction; `Decoder` turns
codes and documents back into the tidy columns' exact text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from backchannel.store._codec import (
    MIN_DICTIONARY,
    Codec,
    encode_text,
    pack_dictionary,
    parse_records,
    records,
    unpack_dictionary,
)
from backchannel.store._schema import (
    CODED,
    DOCUMENT_TABLES,
    EVENT_STORED,
    LABEL_STORED,
    QUALITY_FIELDS,
    USAGE_FIELDS,
)

REPLICA_CALLS = "replica_calls"
SHARED_CALLS = "shared_calls"
"""The conversation meta key kept in its own column, so `status` reads no document."""
EMPTY_META = "{}"
_EVENT_NAMES = [c.name for c in EVENT_STORED]
_LABEL_NAMES = [c.name for c in LABEL_STORED]
EVENT_CODED = [i for i, name in enumerate(_EVENT_NAMES) if name in CODED]
LABEL_CODED = [i for i, name in enumerate(_LABEL_NAMES) if name in CODED]
_STATUS, _MODEL, _TEXT = (_EVENT_NAMES.index(n) for n in ("status", "model", "text"))


def canonical_json(value: Any) -> str:
    """The JSON text the store writes for meta, values and cells (sorted keys, UTF-8 kept)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class ConversationRecord:
    """A conversation's columns as the tidy table has them (meta as JSON text)."""

    conversation_id: str
    cell_key: str
    cell: str
    item_id: str
    replicate: int
    seed: int
    status: str
    error: str | None
    meta: str
    position: int
    finished_at: float


@dataclass(frozen=True)
class EventRecord:
    """An event's stored columns (in `EVENT_STORED` order), its meta without the prompt, and
    its prompt as JSON text (None when it made no call)."""

    values: tuple[Any, ...]
    meta: str
    prompt: str | None


def split_meta(meta: dict[str, Any]) -> tuple[str, str | None]:
    """An event's meta (without its prompt) and its prompt, as the store writes them."""
    if "prompt" not in meta:
        return canonical_json(meta), None
    rest = dict(meta)
    prompt = rest.pop("prompt")
    return canonical_json(rest), canonical_json(prompt)


def quality(events: Iterable[EventRecord]) -> tuple[int, ...]:
    """`QUALITY_FIELDS` of one conversation's events, by the rule of `answer_quality`."""
    answers = empty = unreadable = refused = errors = 0
    for event in events:
        values = event.values
        if values[_MODEL] == "":
            continue
        answers += 1
        status = values[_STATUS]
        blank = values[_TEXT].strip(" \t\n\r") == ""
        empty += status in ("ok", "parse_failure") and blank
        unreadable += status == "parse_failure" and not blank
        refused += status == "refusal"
        errors += status == "error"
    return answers, empty, unreadable, refused, errors


class _Names:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.code_of: dict[str, int] = {}
        self.name_of: dict[int, str] = {}
        self.load(db)

    def load(self, db: sqlite3.Connection) -> None:
        for code, name in db.execute("SELECT id, name FROM names"):
            self.code_of[name] = code
            self.name_of[code] = name


def load_codec(db: sqlite3.Connection) -> tuple[Codec, dict[str, int]]:
    """The store's codec with every stored dictionary, and the dictionary of each part."""
    codec = Codec()
    parts: dict[str, int] = {}
    for key, part, data in db.execute("SELECT id, part, data FROM dictionaries"):
        codec.add_dictionary(key, unpack_dictionary(data))
        parts[part] = key
    return codec, parts


class Writer:
    """Inserts conversations into the compact store; call `settled(ok)` after each transaction
    so names and dictionaries created in a rolled-back one are forgotten."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._names = _Names(db)
        self._codec, self._parts = load_codec(db)
        self._new_names: list[str] = []
        self._new_parts: list[str] = []

    def code(self, name: str) -> int:
        code = self._names.code_of.get(name)
        if code is None:
            code = _rowid(self._db.execute("INSERT INTO names (name) VALUES (?)", (name,)))
            self._names.code_of[name] = code
            self._names.name_of[code] = name
            self._new_names.append(name)
        return code

    def settled(self, committed: bool) -> None:
        if not committed:
            for name in self._new_names:
                del self._names.name_of[self._names.code_of.pop(name)]
            for part in self._new_parts:
                self._parts.pop(part)
            self._codec, self._parts = load_codec(self._db)
        self._new_names.clear()
        self._new_parts.clear()

    def _document(self, conv: int, part: str, text: str) -> None:
        if not text:
            return
        data = encode_text(text)
        key = self._parts.get(part)
        if key is None and len(data) >= MIN_DICTIONARY:
            key = _rowid(
                self._db.execute(
                    "INSERT INTO dictionaries (part, data) VALUES (?, ?)",
                    (part, pack_dictionary(data)),
                )
            )
            self._codec.add_dictionary(key, data)
            self._parts[part] = key
            self._new_parts.append(part)
        self._db.execute(
            f"INSERT INTO {part} (conv, dictionary, data) VALUES (?, ?, ?)",
            (conv, key, self._codec.compress(data, key)),
        )

    def insert(
        self,
        conversation: ConversationRecord,
        events: Sequence[EventRecord],
        labels: Sequence[tuple[Any, ...]],
        usage: Iterable[tuple[Any, ...]],
    ) -> int:
        """Store one conversation (replacing any earlier one with its id); returns its key."""
        c = conversation
        self._db.execute(
            "DELETE FROM conversations WHERE conversation_id = ?", (c.conversation_id,)
        )
        meta, replica_calls = _split_replica_calls(c.meta)
        shared = _shared_calls(meta)
        conv = _rowid(
            self._db.execute(
                "INSERT INTO conversations (conversation_id, cell_key, cell, item_id, replicate, "
                "seed, status, error, position, finished_at, replica_calls, shared_calls, "
                f"labelled, events, {', '.join(QUALITY_FIELDS)}) "
                f"VALUES ({', '.join('?' * (14 + len(QUALITY_FIELDS)))})",
                (
                    c.conversation_id,
                    c.cell_key,
                    c.cell,
                    c.item_id,
                    c.replicate,
                    c.seed,
                    c.status,
                    c.error,
                    c.position,
                    c.finished_at,
                    replica_calls,
                    shared,
                    len(labels),
                    len(events),
                    *quality(events),
                ),
            )
        )
        self._db.executemany(
            f"INSERT INTO events (conv, {', '.join(_EVENT_NAMES)}) "
            f"VALUES ({', '.join('?' * (1 + len(_EVENT_NAMES)))})",
            [(conv, *self._coded(e.values, EVENT_CODED)) for e in events],
        )
        self._db.executemany(
            f"INSERT OR REPLACE INTO labels (conv, {', '.join(_LABEL_NAMES)}) "
            f"VALUES ({', '.join('?' * (1 + len(_LABEL_NAMES)))})",
            [(conv, *self._coded(label, LABEL_CODED)) for label in labels],
        )
        self._db.executemany(
            f"INSERT INTO usage (conv, model, {', '.join(USAGE_FIELDS)}) "
            f"VALUES ({', '.join('?' * (2 + len(USAGE_FIELDS)))})",
            [(conv, self.code(u[0]), *u[1:]) for u in usage],
        )
        self._document(conv, "conversation_meta", meta)
        seq = _EVENT_NAMES.index("seq")
        self._document(
            conv,
            "event_meta",
            records((e.values[seq], e.meta) for e in events if e.meta != EMPTY_META),
        )
        self._document(
            conv,
            "prompts",
            records((e.values[seq], e.prompt) for e in events if e.prompt is not None),
        )
        return conv

    def add_labels(self, conv: int, labels: Sequence[tuple[Any, ...]]) -> None:
        """Add (or replace) labels of one conversation; its `labelled` count says it changed."""
        self._db.execute(
            "UPDATE conversations SET labelled = labelled + ? WHERE conv = ?", (len(labels), conv)
        )
        self._db.executemany(
            f"INSERT OR REPLACE INTO labels (conv, {', '.join(_LABEL_NAMES)}) "
            f"VALUES ({', '.join('?' * (1 + len(_LABEL_NAMES)))})",
            [(conv, *self._coded(label, LABEL_CODED)) for label in labels],
        )

    def _coded(self, values: Sequence[Any], coded: list[int]) -> list[Any]:
        row = list(values)
        for i in coded:
            row[i] = self.code(row[i])
        return row


def _rowid(cursor: sqlite3.Cursor) -> int:
    """The key SQLite gave the row just inserted."""
    if cursor.lastrowid is None:
        raise RuntimeError("SQLite gave no key to an inserted row")
    return int(cursor.lastrowid)


def _shared_calls(meta: str) -> int:
    """Calls of a conversation that another conversation's call answered (`meta.shared_calls`,
    kept in the document too), for status to sum without reading any document."""
    if f'"{SHARED_CALLS}"' not in meta:
        return 0
    value = json.loads(meta)
    return int(value.get(SHARED_CALLS, 0)) if isinstance(value, dict) else 0


def _split_replica_calls(meta: str) -> tuple[str, str | None]:
    """A conversation's meta without its replica calls, and those calls as JSON (or None)."""
    if f'"{REPLICA_CALLS}"' not in meta:
        return meta, None
    value = json.loads(meta)
    if not isinstance(value, dict) or REPLICA_CALLS not in value:
        return meta, None
    calls = value.pop(REPLICA_CALLS)
    return canonical_json(value), canonical_json(calls)


class Decoder:
    """Names and documents of a store opened for reading; reloads what a writer adds."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._names = _Names(db)
        self._codec, _ = load_codec(db)

    def refresh(self, db: sqlite3.Connection | None = None) -> None:
        """Read names and dictionaries again (after the connection was reopened)."""
        self._db = db or self._db
        self._names.load(self._db)
        self._codec, _ = load_codec(self._db)

    @property
    def names(self) -> dict[int, str]:
        """Code -> name, complete for every code stored so far."""
        return self._names.name_of

    def name(self, code: int) -> str:
        found = self._names.name_of.get(code)
        if found is None:
            self.refresh()
            found = self._names.name_of[code]
        return found

    def code(self, name: str) -> int | None:
        return self._names.code_of.get(name)

    def text(self, data: bytes, dictionary: int | None) -> str:
        if dictionary is not None and not self._codec.has(dictionary):
            self.refresh()
        return self._codec.text(data, dictionary)

    def documents(self, part: str, convs: Sequence[int] | None = None) -> dict[int, str]:
        """conv -> the text of its `part` document (conversations without one are left out)."""
        if part not in DOCUMENT_TABLES:
            raise ValueError(part)
        if convs is None:
            rows = self._db.execute(f"SELECT conv, dictionary, data FROM {part}")
        else:
            marks = ",".join("?" * len(convs))
            rows = self._db.execute(
                f"SELECT conv, dictionary, data FROM {part} WHERE conv IN ({marks})", list(convs)
            )
        # Conversations of one item and arm store the same document: each is decoded once.
        decoded: dict[tuple[int | None, bytes], str] = {}
        found: dict[int, str] = {}
        for conv, dictionary, data in rows:
            key = (dictionary, data)
            text = decoded.get(key)
            if text is None:
                text = decoded[key] = self.text(data, dictionary)
            found[conv] = text
        return found

    def records(self, part: str, convs: Sequence[int] | None = None) -> dict[int, dict[int, str]]:
        """conv -> seq -> JSON text, of the `event_meta` or `prompts` documents."""
        found: dict[int, dict[int, str]] = {}
        for conv, seq, text in self.each_record(part, convs):
            found.setdefault(conv, {})[seq] = text
        return found

    def each_record(
        self,
        part: str,
        convs: Sequence[int] | None = None,
        rank: dict[int, int] | None = None,
    ) -> Iterator[tuple[int, int, str]]:
        """(conv, seq, JSON text) of the `event_meta` or `prompts` documents, one document
        decompressed at a time (memory: one conversation's text beside what is kept), in seq
        order within a conversation and conversations by `rank` when given."""
        if part not in DOCUMENT_TABLES:
            raise ValueError(part)
        sql = f"SELECT conv, dictionary, data FROM {part}"
        if convs is None:
            rows = self._db.execute(sql).fetchall()
        else:
            marks = ",".join("?" * len(convs))
            rows = self._db.execute(f"{sql} WHERE conv IN ({marks})", list(convs)).fetchall()
        if rank is not None:
            rows.sort(key=lambda row: rank.get(row[0], len(rank)))
        for conv, dictionary, data in rows:
            for seq, text in parse_records(self.text(data, dictionary)):
                yield conv, seq, text


def conversation_meta(document: str | None, replica_calls: str | None) -> str:
    """A conversation's meta JSON, exactly as written: its document with its replica calls."""
    meta = EMPTY_META if document is None else document
    if replica_calls is None:
        return meta
    value = json.loads(meta)
    value[REPLICA_CALLS] = json.loads(replica_calls)
    return canonical_json(value)
