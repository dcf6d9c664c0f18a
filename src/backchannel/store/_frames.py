"""The tidy frames of a compact store, for all conversations or a batch of them.

Each frame reads only its own tables: events never touch a document, `event_meta` and `prompts`
are read only when asked for, so a command that shows no prompt reads none.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from backchannel._cores import usable_cores
from backchannel.engine import (
    CONVERSATION_TABLE,
    EVENT_TABLE,
    LABEL_TABLE,
    PROMPT_TABLE,
    column_names,
)
from backchannel.store._arrow import frame_of, select_columns, series_of, start_whole_reads
from backchannel.store._coded import Lookup, run_order
from backchannel.store._rows import (
    EMPTY_META,
    EVENT_CODED,
    LABEL_CODED,
    Decoder,
    conversation_meta,
)
from backchannel.store._schema import CODED, EVENT_STORED, LABEL_STORED

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_EVENT_STORED = [c.name for c in EVENT_STORED]
_LABEL_STORED = [c.name for c in LABEL_STORED]
_EVENT_TEXTS = [c.name for c in EVENT_STORED if c.type is str and c.name not in CODED]
_LABEL_TEXTS = [c.name for c in LABEL_STORED if c.type is str and c.name not in CODED]
_CONVERSATIONS_PER_PART = 2_000
"""Below this many conversations a part, one scan is quicker than starting more threads."""
_CONVERSATION_STORED = (
    "conversation_id",
    "cell_key",
    "cell",
    "item_id",
    "replicate",
    "seed",
    "status",
    "error",
)


class Scope:
    """Which conversations a frame covers, in run order: conv keys and their ids."""

    def __init__(self, convs: Sequence[int], ids: Sequence[str]) -> None:
        self.convs = list(convs)
        self.ids = list(ids)
        self.rank = {conv: i for i, conv in enumerate(self.convs)}
        self.id_of = dict(zip(self.convs, self.ids, strict=True))

    def where(self, column: str = "conv") -> tuple[str, list[int]]:
        marks = ",".join("?" * len(self.convs))
        return f"WHERE {column} IN ({marks})", self.convs


def scopes(db: sqlite3.Connection, size: int | None = None) -> list[Scope]:
    """Every stored conversation in run order, as one scope or in batches of `size`."""
    rows = db.execute(
        "SELECT conv, conversation_id FROM conversations ORDER BY position"
    ).fetchall()
    size = size or max(1, len(rows))
    return [
        Scope([r[0] for r in rows[i : i + size]], [r[1] for r in rows[i : i + size]])
        for i in range(0, max(1, len(rows)), size)
    ]


def _select(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    scope: Scope,
    everything: bool,
) -> pa.Table:
    """`columns` of `table` (after `conv`) for `scope`, read a column at a time."""
    sql = f"SELECT conv, {', '.join(columns)} FROM {table}"
    if not everything:
        sql += f" WHERE conv IN ({','.join(str(int(conv)) for conv in scope.convs)})"
    return select_columns(db, sql, ["conv", *columns])


def _select_rows(
    db: sqlite3.Connection, table: str, columns: Sequence[str], scope: Scope, everything: bool
) -> list[tuple[Any, ...]]:
    sql = f"SELECT conv, {', '.join(columns)} FROM {table}"
    if everything:
        return db.execute(sql).fetchall()
    where, params = scope.where()
    return db.execute(f"{sql} {where}", params).fetchall()


def _tidy(
    table: pa.Table,
    scope: Scope,
    run_id: str,
    columns: Sequence[str],
    *,
    keys: Sequence[str],
    coded: Sequence[str],
    texts: Sequence[str],
    names: Lookup,
) -> pd.DataFrame:
    """The frame `frame_of` makes of `table`, in run order (then by `keys`), its codes named,
    `run_id` and `conversation_id` (for its `conv`) first, with `columns` in that order.

    Built a column at a time from the Arrow columns, once: the rows are taken in run order only
    when they are not in it already, each conv is looked up once, and no column is replaced
    after the frame is made. An empty table keeps the dtypes SQLite's reader gives it."""
    import pandas as pd
    import pyarrow as pa

    if table.num_rows == 0:
        frame = frame_of(table, texts)
        frame.insert(0, "conversation_id", frame.pop("conv"))
        frame.insert(0, "run_id", run_id)
        return frame[list(columns)]
    conversations = Lookup(scope.id_of)
    order, at = run_order(
        table.column("conv").to_numpy().astype(np.int64, copy=False),
        conversations,
        scope.rank,
        [series_of(table.column(key), key in texts).to_numpy(dtype=np.int64) for key in keys],
        [names if key in coded else None for key in keys],
    )
    if order is not None:
        table, at = table.take(pa.array(order)), at[order]
    found: dict[str, Any] = {
        "run_id": _constant(run_id, table.num_rows),
        "conversation_id": conversations.texts_at(at),
    }
    for name in columns[2:]:
        series = series_of(table.column(name), name in texts)
        found[name] = names.categories(series.to_numpy(dtype="int64")) if name in coded else series
    return pd.DataFrame(found)


def _constant(text: str, rows: int) -> pd.Series:
    """A column holding `text` in every one of `rows` rows, as a categorical: a byte per row."""
    import pandas as pd

    dtype = pd.CategoricalDtype(pd.Index([text], dtype="str"))
    return pd.Series(pd.Categorical.from_codes(np.zeros(rows, dtype=np.int8), dtype=dtype))


def whole_reads(db: sqlite3.Connection, scope: Scope) -> tuple[Callable[[], pa.Table], ...]:
    """Start reading the events and the labels of every stored conversation (`scope`: all of
    them) on the usable cores; each call waits for its table, for `events_frame` and
    `labels_frame`."""
    convs = sorted(scope.convs)
    cores = usable_cores()
    parts = min(cores, max(1, len(convs) // _CONVERSATIONS_PER_PART))
    bounds = [convs[len(convs) * i // parts] for i in range(1, parts)]
    events, labels = start_whole_reads(
        db,
        [("events", _EVENT_STORED), ("labels", _LABEL_STORED)],
        "conv",
        bounds,
        workers=cores,
    )
    return events, labels


def events_frame(
    db: sqlite3.Connection,
    decoder: Decoder,
    scope: Scope,
    run_id: str,
    *,
    everything: bool,
    read: Callable[[], pa.Table] | None = None,
) -> pd.DataFrame:
    """The events of `scope` with every column but `meta`, in run order (`read`: the table
    `whole_reads` started)."""

    table = read() if read is not None else _select(db, "events", _EVENT_STORED, scope, everything)
    frame = _tidy(
        table,
        scope,
        run_id,
        [c for c in column_names(EVENT_TABLE) if c != "meta"],
        keys=["seq"],
        coded=[_EVENT_STORED[i] for i in EVENT_CODED],
        texts=_EVENT_TEXTS,
        names=Lookup(decoder.names),
    )
    frame["cached"] = frame["cached"].astype(bool)
    frame["turn"] = frame["turn"].astype("Int64")
    return frame


def event_meta(
    db: sqlite3.Connection, decoder: Decoder, events: pd.DataFrame, *, everything: bool
) -> pd.Series:
    """The `meta` JSON of each of `events` (matched by conversation and seq)."""
    import pandas as pd

    convs = dict(
        db.execute("SELECT conversation_id, conv FROM conversations").fetchall()
        if everything
        else _convs_of(db, events["conversation_id"].unique().tolist())
    )
    stored = decoder.records("event_meta", None if everything else list(convs.values()))
    by_id = {cid: stored.get(conv, {}) for cid, conv in convs.items()}
    empty: dict[int, str] = {}
    values = [
        by_id.get(cid, empty).get(int(seq), EMPTY_META)
        for cid, seq in zip(events["conversation_id"], events["seq"], strict=True)
    ]
    return pd.Series(values, index=events.index)


def _convs_of(db: sqlite3.Connection, ids: list[str]) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found += db.execute(
            f"SELECT conversation_id, conv FROM conversations WHERE conversation_id IN ({marks})",
            chunk,
        ).fetchall()
    return found


def labels_frame(
    db: sqlite3.Connection,
    decoder: Decoder,
    scope: Scope,
    run_id: str,
    *,
    everything: bool,
    read: Callable[[], pa.Table] | None = None,
) -> pd.DataFrame:
    """The labels of `scope`, in run order, then by event and judge (`read`: the table
    `whole_reads` started)."""

    return _tidy(
        read() if read is not None else _select(db, "labels", _LABEL_STORED, scope, everything),
        scope,
        run_id,
        column_names(LABEL_TABLE),
        keys=["event_seq", "judge"],
        coded=[_LABEL_STORED[i] for i in LABEL_CODED],
        texts=_LABEL_TEXTS,
        names=Lookup(decoder.names),
    )


def conversations_frame(
    db: sqlite3.Connection,
    decoder: Decoder,
    scope: Scope,
    manifest: dict[str, Any],
    run_id: str,
    *,
    everything: bool,
) -> pd.DataFrame:
    """The conversations of `scope` in run order, with their meta and one column per factor."""
    import pandas as pd

    stored = (*_CONVERSATION_STORED, "replica_calls")
    rows = _select_rows(db, "conversations", stored, scope, everything)
    documents = decoder.documents("conversation_meta", None if everything else scope.convs)
    rows.sort(key=lambda r: scope.rank[r[0]])  # stable: ties keep the order read
    metas = [conversation_meta(documents.get(r[0]), r[-1]) for r in rows]
    stored_columns = list(zip(*rows, strict=True)) if rows else [()] * (len(stored) + 1)
    # A column at a time: `from_records` first makes one object array of every row and
    # value, several times slower than the columns it then infers (one at a time, alike).
    columns = {
        name: _column(values)
        for name, values in zip(_CONVERSATION_STORED, stored_columns[1:-1], strict=True)
    }
    frame = pd.DataFrame({**columns, "meta": _shared(metas)}, index=pd.RangeIndex(len(rows)))
    frame.insert(0, "run_id", _constant(run_id, len(rows)))
    frame.insert(2, "paradigm", manifest.get("paradigm", ""))
    factors = list(manifest.get("factors", []))
    for factor, levels in factor_levels(frame["cell"], factors).items():
        frame[factor] = levels
    return frame[[*column_names(CONVERSATION_TABLE), *factors]]


def _column(values: Sequence[Any]) -> pd.Series:
    """One column typed as `DataFrame.from_records` types it; a column of strings is built by
    Arrow, many times quicker than from_records or a loop over the rows."""
    import pandas as pd
    import pyarrow as pa

    if values and all(type(v) is str for v in values):
        return pd.Series(pd.array(pa.array(values, type=pa.large_string()), dtype="str"))
    return pd.DataFrame.from_records([(v,) for v in values], columns=["v"], nrows=len(values))["v"]


def _shared(values: Sequence[str]) -> pd.Series:
    """An object column of `values` in which equal texts are one Python string: the
    conversations of one item and arm hold one meta text (about 10 KB for testimony), so
    100,000 conversations keep a few hundred texts and a reference per row instead of a
    gigabyte of copies, and `map(json.loads)` or a loop over the column copies nothing.
    Each distinct object is compared once, by identity first (metas of one item and arm are
    one object already)."""
    import pandas as pd

    by_object: dict[int, str] = {}
    by_text: dict[str, str] = {}
    shared: list[str] = []
    for value in values:
        one = by_object.get(id(value))
        if one is None:
            one = by_object[id(value)] = by_text.setdefault(value, value)
        shared.append(one)
    return pd.Series(shared, dtype=object)


def factor_levels(cells: pd.Series, factors: Sequence[str]) -> dict[str, pd.Series]:
    """Each factor's level in each cell JSON (None where a cell lacks it). A design has a few
    cells and many conversations in each, so each distinct cell is decoded once."""
    distinct = {text: json.loads(text) for text in cells.unique()}
    found: dict[str, pd.Series] = {}
    for factor in factors:
        level = {text: cell.get(factor) for text, cell in distinct.items()}
        found[factor] = cells.map(level.__getitem__)
    return found


def prompts_frame(
    db: sqlite3.Connection, decoder: Decoder, scope: Scope, run_id: str, *, everything: bool
) -> pd.DataFrame:
    """One row per model call of `scope`: its conversation, seq and prompt (JSON), in run
    order."""
    import pandas as pd

    ids: list[str] = []
    seqs: list[int] = []
    texts: list[str] = []
    convs = None if everything else scope.convs
    # Documents come in run order and hold their records in seq order: no sort, one copy.
    for conv, seq, text in decoder.each_record("prompts", convs, scope.rank):
        ids.append(scope.id_of[conv])
        seqs.append(seq)
        texts.append(text)
    columns = [
        _constant(run_id, len(ids)),
        pd.Series(ids, dtype="str"),
        pd.Series(seqs, dtype="int64"),
        pd.Series(texts, dtype="str"),
    ]
    return pd.DataFrame(dict(zip(column_names(PROMPT_TABLE), columns, strict=True)))
