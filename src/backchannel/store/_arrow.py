"""A store's rows read as whole Arrow columns, not as a Python tuple per row.

Through `sqlite3` every row of a large run becomes a tuple of Python objects that pandas then
takes apart again; that was most of reading a run (bench/RESULTS.md, section (k)). The ADBC
SQLite driver returns the same rows as Arrow columns. It infers each column's type from the
values of a batch, so the whole result is asked for as one batch: a text column whose first
thousand values are NULL is still read as text.

A whole table is read in ranges of its leading key on worker threads, one connection each:
SQLite steps and ADBC builds the columns without holding the interpreter's lock, so on two
cores the events and labels of a large run are read side by side. The ranges follow the key's
order, so the parts put end to end are the rows one scan gives.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_SPARE_ROWS = 1_024
"""Room in the one batch for rows written between the count and the read (a live run)."""
_BUSY_MS = 10_000
"""How long a read waits for a lock another reader holds (the store's own connection's wait)."""
_MAPPED = 1 << 40
"""Bytes of the file SQLite may map into memory to read it (capped by its own build limit)."""


def select_columns(db: sqlite3.Connection, sql: str, names: Sequence[str]) -> pa.Table:
    """The rows of `sql` (no parameters) as an Arrow table with columns `names`, read from the
    file `db` is open on; a database with no file is read through `db` itself."""
    path = _file_of(db)
    if path is None:
        return _from_rows(db.execute(sql).fetchall(), names)
    table = _adbc_select(path, sql)
    return table.rename_columns(list(names))


def start_whole_reads(
    db: sqlite3.Connection,
    selects: Sequence[tuple[str, Sequence[str]]],
    key: str,
    bounds: Sequence[int],
    workers: int,
) -> list[Callable[[], pa.Table]]:
    """Start reading each (table, columns) select whole, split at `bounds` of the integer
    `key` (the table's leading primary-key column) on `workers` threads; each returned call
    waits for its table (columns `key` and `columns`), as one scan in key order gives it. With
    one worker or no bounds each call reads its table itself."""
    sqls = [f"SELECT {key}, {', '.join(columns)} FROM {table}" for table, columns in selects]
    names = [[key, *columns] for _, columns in selects]
    path = _file_of(db)
    if path is None or workers < 2 or not bounds:
        return [partial(select_columns, db, q, n) for q, n in zip(sqls, names, strict=True)]
    ranges = _ranges(key, bounds)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="store-read")
    parts = [[pool.submit(_adbc_select, path, f"{sql} WHERE {w}") for w in ranges] for sql in sqls]
    pool.shutdown(wait=False)  # the threads end once their reads are done
    return [partial(_joined, futures, n) for futures, n in zip(parts, names, strict=True)]


def _ranges(key: str, bounds: Sequence[int]) -> list[str]:
    """WHERE clauses that cover every value of `key` once, in order, split at `bounds`."""
    edges = sorted({int(b) for b in bounds})
    clauses = [f"{key} < {edges[0]}"]
    clauses += [f"{key} >= {lo} AND {key} < {hi}" for lo, hi in pairwise(edges)]
    return [*clauses, f"{key} >= {edges[-1]}"]


def _joined(parts: Sequence[Future[pa.Table]], names: list[str]) -> pa.Table:
    """The parts' tables end to end, in one chunk per column (as one scan reads it), its
    columns named `names`. The driver types a column with no value in a part (all NULL, or no
    rows) as an integer: there it takes the type the other parts found."""
    import pyarrow as pa

    tables = [part.result() for part in parts]
    columns = []
    for i in range(tables[0].num_columns):
        pieces = [t.column(i) for t in tables]
        found = [p.type for p in pieces if p.null_count < len(p)]
        if found:
            pieces = [
                p if p.null_count < len(p) else pa.chunked_array([pa.nulls(len(p), found[0])])
                for p in pieces
            ]
        chunks = [chunk for piece in pieces for chunk in piece.chunks]
        columns.append(pa.chunked_array(chunks, type=pieces[0].type).combine_chunks())
    return pa.table(columns, names=names)


def frame_of(table: pa.Table, texts: Collection[str]) -> pd.DataFrame:
    """`table` as the frame `DataFrame.from_records` makes of the same rows: a text column is
    `str` (NaN where NULL), an integer column with a NULL float64 (NaN), and a column whose
    every value is NULL `object` holding None."""
    import pandas as pd

    columns = {
        name: series_of(column, name in texts)
        for name, column in zip(table.column_names, table.columns, strict=True)
    }
    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    return pd.DataFrame(columns)


def series_of(column: pa.ChunkedArray, text: bool) -> pd.Series:
    """One column as `frame_of` makes it (`text`: a column that holds text)."""
    import pandas as pd
    import pyarrow as pa

    if column.null_count == len(column):
        return pd.Series([None] * len(column), dtype=object)
    if text:
        return pd.Series(pd.array(column.cast(pa.string()), dtype="str"))
    return pd.Series(column.to_numpy(zero_copy_only=False))


def _file_of(db: sqlite3.Connection) -> Path | None:
    for _, schema, file in db.execute("PRAGMA database_list").fetchall():
        if schema == "main":
            return Path(file) if file else None
    return None


def _adbc_select(path: Path, sql: str) -> pa.Table:
    """`sql` on the file at `path`, opened read-only as `connect_readonly` opens it: with the
    write-ahead log when one is beside it, else as immutable (nothing written next to it)."""
    import adbc_driver_sqlite.dbapi as adbc

    uri = path.resolve().as_uri()
    modes = ["mode=ro", "mode=ro&immutable=1"]
    if not Path(f"{path}-wal").exists():
        modes = modes[1:]
    last: Exception | None = None
    for mode in modes:
        try:
            with adbc.connect(f"{uri}?{mode}") as connection, connection.cursor() as cursor:
                # Readers opening the log at once briefly lock each other out: wait, as the
                # store's own connection does, rather than fail.
                cursor.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
                cursor.fetchall()
                cursor.execute(f"PRAGMA mmap_size={_MAPPED}")  # pages read in place, not copied
                cursor.fetchall()
                # One batch of the rows there are: the driver reserves room for a whole batch
                # up front, so a fixed huge batch reserved gigabytes of address space per
                # column (a fork or a strict overcommit policy then fails for want of memory).
                cursor.execute(f"SELECT count(*) FROM ({sql})")
                (rows,) = cursor.fetchone() or (0,)
                batch = str(int(rows) + _SPARE_ROWS)
                cursor.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": batch})
                cursor.execute(sql)
                return cursor.fetch_arrow_table()
        except adbc.OperationalError as error:
            last = error
    raise sqlite3.OperationalError(f"cannot read {path}: {last}")


def _from_rows(rows: list[tuple[Any, ...]], names: Sequence[str]) -> pa.Table:
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    return pa.table(
        {name: pa.array(list(values)) for name, values in zip(names, columns, strict=True)}
    )
