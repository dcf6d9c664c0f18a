"""A store's rows read as whole Arrow columns, not as a Python tuple per row.

Through `sqlite3` every row of a large run becomes a tuple of Python objects that pandas then
takes apart again; that was most of reading a run (bench/RESULTS.md, section (k)). The ADBC
SQLite driver returns the same rows as Arrow columns. It infers each column's type from the
values of a batch, so the whole result is asked for as one batch: a text column whose first
thousand values are NULL is still read as text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_ONE_BATCH = str(10**9)
"""Rows per batch: a billion, far more than any run holds in one table."""
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
                cursor.execute(f"PRAGMA mmap_size={_MAPPED}")  # pages read in place, not copied
                cursor.fetchall()
                cursor.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": _ONE_BATCH})
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
