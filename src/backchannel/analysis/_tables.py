"""The tidy tables of one run, as pandas DataFrames (see docs/data-schema.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from backchannel._safe_text import from_csv_cell
from backchannel.analysis._texts import texts_in
from backchannel.engine import (
    CONVERSATION_TABLE,
    EVENT_TABLE,
    LABEL_TABLE,
    PROMPT_TABLE,
    Column,
    column_names,
)

if TYPE_CHECKING:
    from backchannel._beside import Beside

EVENT_COLUMNS = column_names(EVENT_TABLE)
PROMPT_COLUMNS = column_names(PROMPT_TABLE)
LABEL_COLUMNS = column_names(LABEL_TABLE)
CONVERSATION_BASE_COLUMNS = column_names(CONVERSATION_TABLE)


# Text columns that are never null: CSV writes "" and null alike, so these read back as "".
def _text_not_null(columns: tuple[Column, ...]) -> list[str]:
    return [c.name for c in columns if c.type is str and not c.nullable and c.name not in _IDS]


_IDS = ("run_id", "conversation_id")
_TEXT_NOT_NULL = {
    "events": _text_not_null(EVENT_TABLE),
    "labels": _text_not_null(LABEL_TABLE),
    "conversations": _text_not_null(CONVERSATION_TABLE),
    "prompts": _text_not_null(PROMPT_TABLE),
}

# Identifiers and texts stay strings when read back from CSV (an item id "1" is not the number 1).
_STRING_DTYPES = {
    name: dict.fromkeys(
        {"run_id", "conversation_id", "value", "label", "error", "judge", *columns}, str
    )
    for name, columns in _TEXT_NOT_NULL.items()
}


DONE = "done"

T = TypeVar("T")


def decode_json(text: Any) -> Any:
    """A stored JSON cell as a Python object: None for a missing or empty cell; objects that are
    already decoded (as in a Parquet round trip) pass through."""
    if text is None or (isinstance(text, float) and pd.isna(text)) or text == "":
        return None
    return json.loads(text) if isinstance(text, str) else text


FORK_FROM_EVENTS = 200_000
"""Below this many events a run's analysis sections take well under a second each, less than
is worth a second process."""


def _store_read_refused(*_: object) -> Any:
    raise RuntimeError("the store is not read from a forked process")


class RunTables:
    """Events, labels and conversations of one run, plus its manifest.

    `events.value`, `events.meta` and `conversations.meta` hold JSON text; `events_of()` and
    `done_conversations()` give them decoded, which is how every paradigm reads a run.
    Inside `reuse()`, such extractions are computed once and shared (see `memo`).

    `event_meta`, when given, reads the events' `meta` column on first use of `events`;
    `core_events` never needs it, so an analysis that reads no event meta never loads it.
    `prompts` (a frame of `PROMPT_COLUMNS`, or how to read it) is read on first use of
    `prompts` only: the prompts are most of a run's text and no metric needs them.
    `answer_counts`, when given, are the store's own counts of its answers (see `answer_counts`).
    """

    def __init__(
        self,
        events: pd.DataFrame,
        labels: pd.DataFrame,
        conversations: pd.DataFrame,
        manifest: dict[str, Any] | None = None,
        *,
        event_meta: Callable[[pd.DataFrame], pd.Series] | None = None,
        prompts: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
        answer_counts: dict[str, int] | None = None,
    ) -> None:
        self._events = events
        self.answer_counts = answer_counts
        """The answer counts a store kept as it wrote the events (`RunStore.answer_quality`),
        or None: then they are counted from the events."""
        self._event_meta = event_meta
        self._prompts = prompts
        self.labels = labels
        self.conversations = conversations
        self.manifest: dict[str, Any] = {} if manifest is None else manifest
        self._memo: dict[Hashable, Any] = {}
        self._reusing = 0

    def __repr__(self) -> str:
        return (
            f"RunTables({len(self._events)} events, {len(self.labels)} labels, "
            f"{len(self.conversations)} conversations)"
        )

    @property
    def events(self) -> pd.DataFrame:
        """Every event, in stored order, with all of `EVENT_COLUMNS`."""
        if self._event_meta is not None:
            meta = self._event_meta(self._events)
            self._events = self._events.assign(meta=meta)[
                [c for c in EVENT_COLUMNS if c in self._events.columns or c == "meta"]
            ]
            self._event_meta = None
        return self._events

    @events.setter
    def events(self, frame: pd.DataFrame) -> None:
        self._events = frame
        self._event_meta = None
        self.answer_counts = None  # the store's counts were of the events it gave

    @property
    def prompts(self) -> pd.DataFrame:
        """One row per model call: conversation, seq and the prompt it was sent (JSON text of
        `[[role, content], ...]`), in stored order; read on first use."""
        if self._prompts is None:
            self._prompts = pd.DataFrame(columns=PROMPT_COLUMNS)
        elif callable(self._prompts):
            self._prompts = self._prompts()
        return self._prompts

    @property
    def core_events(self) -> pd.DataFrame:
        """The events with every column but possibly `meta` (not read until it is needed)."""
        return self._events

    def beside(self, work: Callable[[], T]) -> Beside[T]:
        """`work` over these tables, started in a forked copy of the process when the run is
        large enough to gain from it (see `backchannel._beside`); the child reads no store."""
        from backchannel._beside import Beside

        large = len(self._events) >= FORK_FROM_EVENTS
        return Beside(work, in_child=self.forbid_store_reads, fork=None if large else False)

    def forbid_store_reads(self) -> None:
        """From now on a lazy read of the store (event meta, prompts) raises instead: for a
        forked copy of the process, which must not use its parent's database connection."""
        if self._event_meta is not None:
            self._event_meta = _store_read_refused
        if callable(self._prompts):
            self._prompts = _store_read_refused

    @contextmanager
    def reuse(self) -> Iterator[RunTables]:
        """Within the block, `memo` keeps what it computes, so a command that asks for the same
        extraction many times decodes and filters once; the tables must not change meanwhile.
        The kept values are dropped when the outermost block ends."""
        self._reusing += 1
        try:
            yield self
        finally:
            self._reusing -= 1
            if not self._reusing:
                self._memo.clear()

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """`build()`, computed once per `key` inside `reuse()` (and every time outside it)."""
        if not self._reusing:
            return build()
        if key not in self._memo:
            self._memo[key] = build()
        value: T = self._memo[key]
        return value

    @property
    def factors(self) -> list[str]:
        """The design's factor names, in the order the experiment declared them."""
        declared = self.manifest.get("factors")
        if declared is not None:
            return list(declared)
        return [c for c in self.conversations.columns if c not in CONVERSATION_BASE_COLUMNS]

    def done_conversations(self) -> pd.DataFrame:
        """The finished conversations (status done), in stored order, with `meta` decoded to a
        dict; unfinished ones are counted by their status, never analysed. Each row has its own
        dict, but conversations that stored the same meta share its nested values: read them,
        copy before changing them."""
        return self.memo(("done_conversations",), self._decode_done).copy()

    def _decode_done(self) -> pd.DataFrame:
        conversations = self.conversations
        done = conversations[conversations["status"] == DONE].copy()
        done["meta"] = _decoded_once(done["meta"])
        return done.reset_index(drop=True)

    def done_events(self) -> pd.Series:
        """A mask over `events`: the events of finished conversations."""
        return self.memo(("done_events",), self._done_mask)

    def done_core_events(self) -> pd.DataFrame:
        """The events of finished conversations without their meta (`core_events` filtered):
        filtered once inside `reuse()`, and not copied at all when every conversation
        finished (the usual case), so a caller pays no copy of the texts."""
        return self.memo(("done_core_events",), self._done_core).copy(deep=False)

    def _done_core(self) -> pd.DataFrame:
        mask = self.done_events()
        return self.core_events if bool(mask.all()) else self.core_events[mask]

    def _done_mask(self) -> pd.Series:
        finished = self.conversations["status"] == DONE
        done = self.conversations["conversation_id"][finished]
        events = self.core_events
        return pd.Series(texts_in(events["conversation_id"], done), index=events.index)

    def events_of(
        self,
        *,
        kind: str | None = None,
        name: str | Sequence[str] | None = None,
        channel: str | None = None,
        role: str | None = None,
        done: bool = True,
    ) -> pd.DataFrame:
        """The events of one kind (and name, channel, role), in stored order, with `value` and
        `meta` decoded; by default only those of finished conversations."""
        names = name if name is None or isinstance(name, str) else tuple(name)
        key = ("events_of", kind, names, channel, role, done)
        return self.memo(key, lambda: self._select(kind, name, channel, role, done)).copy()

    def _select(
        self,
        kind: str | None,
        name: str | Sequence[str] | None,
        channel: str | None,
        role: str | None,
        done: bool,
    ) -> pd.DataFrame:
        events = self.events
        mask = pd.Series(True, index=events.index)
        if kind is not None:
            mask &= events["kind"] == kind
        if name is not None:
            mask &= events["name"].isin([name] if isinstance(name, str) else list(name))
        if channel is not None:
            mask &= events["channel"] == channel
        if role is not None:
            mask &= events["role"] == role
        if done:
            mask &= self.done_events()
        chosen = events[mask].copy()
        chosen["value"] = _decoded(chosen["value"], decode_json)
        chosen["meta"] = _decoded(chosen["meta"], _decode_dict)
        return chosen

    def labels_for(self, judge: str) -> pd.DataFrame:
        """The labels of one judge, indexed like events by (conversation_id, event_seq):
        filtered once inside `reuse()`, and not copied when the run has no other judge."""
        return self.memo(("labels_for", judge), lambda: self._of_judge(judge)).copy(deep=False)

    def _of_judge(self, judge: str) -> pd.DataFrame:
        mask = self.labels["judge"] == judge
        return self.labels if bool(mask.all()) else self.labels[mask]

    @classmethod
    def from_directory(cls, directory: Path) -> RunTables:
        """Read tables exported by `backchannel export` (Parquet or CSV)."""
        manifest_path = directory / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        levels: dict[str, list[Any]] = (manifest.get("config_resolved") or {}).get("factors") or {}
        frames: dict[str, pd.DataFrame] = {}
        event_meta: Callable[[pd.DataFrame], pd.Series] | None = None
        prompts: Callable[[], pd.DataFrame] | None = None
        for name in ("events", "labels", "conversations", "prompts"):
            parquet, csv = directory / f"{name}.parquet", directory / f"{name}.csv"
            if name == "prompts":
                if parquet.exists() or csv.exists():
                    prompts = _later_table(cls._read_table, directory, name, levels)
                continue
            if parquet.exists() and name == "events":
                frames[name], event_meta = _lazy_parquet_events(parquet)
            elif parquet.exists() or csv.exists():
                frames[name] = cls._read_table(directory, name, levels)
            else:
                raise FileNotFoundError(
                    f"{directory} has no {name}.parquet or {name}.csv; "
                    "write it with `backchannel export RUN -o DIR`"
                )
        return cls(
            frames["events"],
            frames["labels"],
            frames["conversations"],
            manifest,
            event_meta=event_meta,
            prompts=prompts,
        )

    @staticmethod
    def _read_table(directory: Path, name: str, levels: dict[str, list[Any]]) -> pd.DataFrame:
        """One exported table (Parquet, or CSV read back with its types)."""
        parquet, csv = directory / f"{name}.parquet", directory / f"{name}.csv"
        if parquet.exists():
            return pd.read_parquet(parquet)
        dtypes = dict(_STRING_DTYPES[name])
        if name == "conversations":
            dtypes.update(dict.fromkeys(levels, str))
        frame = pd.read_csv(csv, keep_default_na=False, na_values=[""], dtype=dtypes)
        # Text cells the export escaped against spreadsheet formulas get their text back.
        for column in frame.columns:
            if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
                frame[column] = frame[column].map(from_csv_cell)
        text = [c for c in _TEXT_NOT_NULL[name] if c in frame.columns]
        frame[text] = frame[text].astype(object).fillna("")
        if name == "conversations":
            # CSV has no types: give factor columns back the levels the file declared
            # (a level "1" stays the text "1", a level 1 the number 1).
            for factor, declared in levels.items():
                if factor in frame.columns:
                    by_text = {_csv_text(level): level for level in declared}
                    frame[factor] = frame[factor].map(lambda v, m=by_text: m.get(v, v))
        return frame

    @classmethod
    def empty(cls) -> RunTables:
        return cls(
            pd.DataFrame(columns=EVENT_COLUMNS),
            pd.DataFrame(columns=LABEL_COLUMNS),
            pd.DataFrame(columns=CONVERSATION_BASE_COLUMNS),
        )


def _later_table(
    read: Callable[[Path, str, dict[str, list[Any]]], pd.DataFrame],
    directory: Path,
    name: str,
    levels: dict[str, list[Any]],
) -> Callable[[], pd.DataFrame]:
    return lambda: read(directory, name, levels)


def _lazy_parquet_events(
    path: Path,
) -> tuple[pd.DataFrame, Callable[[pd.DataFrame], pd.Series] | None]:
    """The events of a Parquet file without `meta`, and how to read that column later (the
    rows keep the file's order, so it lines up by position)."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    if "meta" not in names or any(n.startswith("__index_level_") for n in names):
        return pd.read_parquet(path), None
    events = pd.read_parquet(path, columns=[c for c in names if c != "meta"])

    def meta(frame: pd.DataFrame) -> pd.Series:
        column = pd.read_parquet(path, columns=["meta"])["meta"]
        if len(column) != len(frame):
            raise ValueError(f"{path} changed while it was read; run the command again")
        return column.set_axis(frame.index)

    return events, meta


def _csv_text(level: Any) -> str:
    """How pandas writes a factor level into a CSV cell."""
    return str(level)


def _decoded(column: pd.Series, decode: Callable[[Any], Any]) -> pd.Series:
    """A column of decoded objects (object dtype, so an integer stays an int)."""
    return pd.Series([decode(v) for v in column], index=column.index, dtype=object)


def _decoded_once(column: pd.Series) -> pd.Series:
    """Conversation metas decoded to dicts, each distinct text once: every conversation of an
    item and arm stores the same meta (testimony's story is about 10 KB of JSON), so a run of
    100,000 conversations holds a few hundred distinct texts. A string column's texts are told
    apart by `pd.factorize` (in Arrow), not each turned into a Python string; an object column
    (the store's, where equal metas are one string) is looked up by text, and may hold metas
    already decoded (a Parquet round trip), which pass through."""
    if isinstance(column.dtype, pd.StringDtype):
        codes, distinct = pd.factorize(column)
        decoded = [_decode_dict(text) for text in distinct]
        missing = _decode_dict(None)
        values = [dict(decoded[code]) if code >= 0 else dict(missing) for code in codes.tolist()]
        return pd.Series(values, index=column.index, dtype=object)
    found: dict[str, dict[str, Any]] = {}
    values = []
    for text in column.tolist():
        if not isinstance(text, str):
            values.append(_decode_dict(text))
            continue
        if text not in found:
            found[text] = _decode_dict(text)
        values.append(dict(found[text]))
    return pd.Series(values, index=column.index, dtype=object)


def _decode_dict(text: Any) -> dict[str, Any]:
    value = decode_json(text)
    return dict(value) if isinstance(value, dict) else {}
