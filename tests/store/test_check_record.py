"""A writer checks the whole store once when it closes and records it sound; opening an unchanged
store then checks only its header, and a changed one is checked again (status: the tables it
reads)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, invoke

from backchannel import _sqlite
from backchannel.errors import RunDirectoryError
from backchannel.store import STATUS_TABLES, RunStore


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The `tables` argument of every quick_check made (None: the whole file)."""
    made: list[Any] = []
    real = _sqlite._check

    def counted(path: Path, tables: Any) -> Any:
        made.append(None if tables is None else tuple(tables))
        return real(path, tables)

    monkeypatch.setattr(_sqlite, "_check", counted)
    return made


def finished(write: WriteExperiment, directory: Path) -> Path:
    result = invoke("run", write(), "-o", directory)
    assert result.exit_code == 0, result.stderr
    return directory


def test_an_unchanged_store_is_not_checked_again(
    write_experiment: WriteExperiment, tmp_path: Path, checks: list[Any]
) -> None:
    run = finished(write_experiment, tmp_path / "run")
    assert (run / "run.sqlite-check").is_file() and (run / "cache.sqlite-check").is_file()
    checks.clear()
    for args in (["status", run], ["metrics", run], ["export", run, "-o", tmp_path / "t"]):
        assert invoke(*args).exit_code == 0
    assert checks == []


def test_a_changed_store_is_checked_again_and_status_checks_what_it_reads(
    write_experiment: WriteExperiment, tmp_path: Path, checks: list[Any]
) -> None:
    run = finished(write_experiment, tmp_path / "run")
    database = run / "run.sqlite"
    database.write_bytes(database.read_bytes())  # same content, but not as its writer left it
    checks.clear()
    RunStore(run, readonly=True, reads=STATUS_TABLES).close()
    RunStore(run, readonly=True).close()
    assert checks == [STATUS_TABLES, None]


def test_damage_after_the_record_is_still_found(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished(write_experiment, tmp_path / "run")
    database = run / "run.sqlite"
    data = bytearray(database.read_bytes())
    data[-4096:] = b"\xff" * 4096
    database.write_bytes(bytes(data))
    with pytest.raises(RunDirectoryError, match="left untouched"):
        RunStore(run, readonly=True)
    result = invoke("view", run, "--static", tmp_path / "copy")
    assert result.exit_code != 0 and "damaged" in result.stderr


def test_a_reader_that_leaves_an_empty_log_does_not_force_a_check(
    write_experiment: WriteExperiment, tmp_path: Path, checks: list[Any]
) -> None:
    run = finished(write_experiment, tmp_path / "run")
    database = run / "run.sqlite"
    reader = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    reader.execute("SELECT COUNT(*) FROM conversations").fetchone()
    reader.close()  # a read-only reader of a WAL database leaves an empty -wal behind
    assert (run / "run.sqlite-wal").is_file()
    assert (run / "run.sqlite-wal").stat().st_size == 0
    checks.clear()
    assert invoke("metrics", run).exit_code == 0
    assert checks == []
    (run / "run.sqlite-wal").write_bytes(b"\0" * 32)  # a log with content: checked again
    assert invoke("metrics", run).exit_code == 0
    assert checks == [None]
