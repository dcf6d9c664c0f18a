"""Reading a store's rows a column at a time gives the frame the row-by-row reader gave."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from backchannel.store._arrow import frame_of, select_columns, start_whole_reads

_COLUMNS = ["n", "maybe_n", "text", "maybe_text", "never_text", "never_n", "x"]
_TEXTS = {"text", "maybe_text", "never_text"}


def _rows(count: int) -> list[tuple[object, ...]]:
    """Integers, an integer NULL on every third row, text, text NULL on every other row until
    the last (so a driver that guessed types from the first rows would see only NULLs in
    `maybe_text` for 1,100 rows), a column that is always NULL of each kind, and a float."""
    return [
        (
            i,
            None if i % 3 == 0 else i * 10,
            f"t{i}",
            "late" if i == count - 1 else None,
            None,
            None,
            i / 4,
        )
        for i in range(count)
    ]


def _database(path: Path, rows: list[tuple[object, ...]]) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "CREATE TABLE t (n INTEGER NOT NULL, maybe_n INTEGER, text TEXT NOT NULL,"
        " maybe_text TEXT, never_text TEXT, never_n INTEGER, x REAL NOT NULL)"
    )
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return db


def _read(db: sqlite3.Connection) -> pd.DataFrame:
    return frame_of(select_columns(db, f"SELECT {', '.join(_COLUMNS)} FROM t", _COLUMNS), _TEXTS)


@pytest.mark.parametrize("count", [0, 1, 1101])
def test_a_file_reads_as_from_records_reads_its_rows(tmp_path: Path, count: int) -> None:
    rows = _rows(count)
    db = _database(tmp_path / "run.sqlite", rows)
    expected = pd.DataFrame.from_records(rows, columns=_COLUMNS, coerce_float=True)
    found = _read(db)
    pd.testing.assert_frame_equal(found, expected, check_exact=True)
    assert list(found.dtypes.astype(str)) == list(expected.dtypes.astype(str))
    if count:
        assert found["maybe_text"].iloc[-1] == "late"
        assert str(found["maybe_text"].dtype) == "str"
        assert found["never_text"].dtype == object and found["never_text"].iloc[0] is None
    if count > 1:
        assert str(found["maybe_n"].dtype) == "float64"


def test_a_database_without_a_file_is_read_through_its_connection() -> None:
    rows = _rows(5)
    db = _database(Path(":memory:"), rows)
    expected = pd.DataFrame.from_records(rows, columns=_COLUMNS, coerce_float=True)
    pd.testing.assert_frame_equal(_read(db), expected, check_exact=True)


def test_a_file_being_written_is_read_with_its_log(tmp_path: Path) -> None:
    """While a writer holds the file in WAL mode, what it committed is read (from the log)."""
    path = tmp_path / "run.sqlite"
    db = _database(path, [])
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", _rows(3))
    assert Path(f"{path}-wal").stat().st_size > 0
    found = _read(db)
    assert found["n"].tolist() == [0, 1, 2]


def test_factor_levels_decode_each_cell_as_the_row_by_row_decode_did() -> None:
    import json

    from backchannel.store._frames import factor_levels

    cells = pd.Series(['{"k": 1, "m": "a"}', '{"m": "b"}', '{"k": 1, "m": "a"}', '{"k": 2}'])
    found = factor_levels(cells, ["k", "m"])
    decoded = cells.map(json.loads)
    for factor in ("k", "m"):
        expected = decoded.map(lambda cell, f=factor: cell.get(f))
        pd.testing.assert_series_equal(found[factor], expected, check_exact=True)
    assert found["k"].isna().tolist() == [False, True, False, False]
    assert found["k"].dropna().tolist() == [1, 1, 2]
    assert found["m"].fillna("-").tolist() == ["a", "b", "a", "-"]


@pytest.mark.parametrize("bounds", [[1], [500, 1100], [0, 5, 1100, 5000], [1100]])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_table_read_in_ranges_on_threads_is_the_one_scan(
    tmp_path: Path, bounds: list[int], workers: int
) -> None:
    """Ranges that are empty, hold only NULLs of a column (`maybe_text` below the last row) or
    lie past the last key: the parts end to end are the table one scan reads, types and all."""
    db = _database(tmp_path / "run.sqlite", _rows(1101))
    columns = _COLUMNS[1:]
    (read,) = start_whole_reads(db, [("t", columns)], "n", bounds, workers)
    found = frame_of(read(), _TEXTS)
    expected = frame_of(
        select_columns(db, f"SELECT n, {', '.join(columns)} FROM t", _COLUMNS), _TEXTS
    )
    pd.testing.assert_frame_equal(found, expected, check_exact=True)
    assert list(found.dtypes.astype(str)) == list(expected.dtypes.astype(str))
    assert found["n"].tolist() == list(range(1101))


def test_reads_in_ranges_without_a_file_go_through_the_connection() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(3, "c"), (1, "a"), (2, None)])
    (read,) = start_whole_reads(db, [("t", ["text"])], "n", [2], workers=2)
    assert read().to_pydict() == {"n": [1, 2, 3], "text": ["a", None, "c"]}


def _reserved_kib() -> int:
    """This process's private address space (VmData), which a fork must be able to commit."""
    status = Path("/proc/self/status").read_text(encoding="ascii")
    (line,) = [line for line in status.splitlines() if line.startswith("VmData:")]
    return int(line.split()[1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_read_reserves_room_for_the_rows_there_are(tmp_path: Path) -> None:
    """A batch sized far past the rows reserved gigabytes of address space per column, held
    by the columns read (and a fork of the process then failed for want of memory)."""
    db = _database(tmp_path / "run.sqlite", _rows(1101))
    before = _reserved_kib()
    tables = [select_columns(db, f"SELECT {', '.join(_COLUMNS)} FROM t", _COLUMNS)]
    tables += [read() for read in start_whole_reads(db, [("t", _COLUMNS[1:])], "n", [500], 2)]
    assert _reserved_kib() - before < 256 * 1024
    assert [t.num_rows for t in tables] == [1101, 1101]
