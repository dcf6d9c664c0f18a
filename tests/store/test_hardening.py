"""The run store's guards: a newer schema, mixed-type factor levels in Parquet, exports that
succeed whole or leave nothing, and a file given as the export directory."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.analysis import RunTables
from backchannel.errors import RunDirectoryError
from backchannel.store import SCHEMA_VERSION, RunStore, export_tables
from backchannel.store import _export as store_export

TABLE_FILES = {"events", "labels", "conversations", "prompts", "manifest"}


def make_run(write: WriteExperiment, directory: Path, **overrides: Any) -> Path:
    """A stored run of the tiny discussion on sim: one question, so one conversation per cell."""
    path = write(discussion_experiment(items_limit=1, **overrides))
    result = invoke("run", path, "-o", directory)
    assert result.exit_code == 0, result.stderr
    return directory


def test_a_store_from_a_newer_backchannel_is_refused_with_a_clear_message(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = make_run(write_experiment, tmp_path / "run")
    with sqlite3.connect(run / "run.sqlite") as db:
        db.execute("PRAGMA user_version = 99")
    result = invoke("status", run)
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # not an unexpected exception
    assert result.stderr.strip() == (
        f"error: {run}: this run store has schema version 99, newer than this backchannel "
        f"({SCHEMA_VERSION}); upgrade backchannel to read it"
    )
    with pytest.raises(RunDirectoryError, match="schema version 99"):
        RunStore(run)
    # Refusing it changed nothing: the version is still the newer one.
    with sqlite3.connect(run / "run.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 99


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_factor_with_levels_of_mixed_types_exports_and_reads_back(
    fmt: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = make_run(
        write_experiment, tmp_path / "run", factors={"model": ["sim"], "variant": [1, "x"]}
    )
    out = tmp_path / "tables"
    result = invoke("export", run, "-o", out, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    tables = RunTables.from_directory(out)
    # Two cells (variant 1 and "x") x one question x one replicate = two conversations, whose
    # variant reads back as text in both formats.
    assert tables.conversations["variant"].astype(str).tolist() == ["1", "x"]
    assert tables.conversations["cell_key"].tolist() == [
        "model=sim;variant=1",
        "model=sim;variant=x",
    ]
    assert len(tables.events) > 0


def test_a_failing_export_leaves_no_tables(
    write_experiment: WriteExperiment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(write_experiment, tmp_path / "run")
    store = RunStore(run)
    try:
        tables = store.tables()
    finally:
        store.close()
    written: list[str] = []
    real_write = store_export._write_piece

    def third_fails(frame: pd.DataFrame, path: Path) -> None:
        written.append(path.name)
        if len(written) == 3:
            raise OSError("disk full")
        real_write(frame, path)

    monkeypatch.setattr(store_export, "_write_piece", third_fails)
    out = tmp_path / "tables"
    with pytest.raises(RunDirectoryError, match=r"cannot write the tables into .*disk full"):
        export_tables(tables, out, "parquet")
    # events and labels were written before conversations failed; none of them is left.
    assert written == ["events.0.piece", "labels.0.piece", "conversations.0.piece"]
    assert not out.exists() or list(out.iterdir()) == []

    monkeypatch.undo()
    paths = export_tables(tables, out, "parquet")
    assert {p.stem for p in paths} == TABLE_FILES
    assert {p.stem for p in out.iterdir()} == TABLE_FILES  # no staging folder left behind


def test_export_to_a_file_is_one_clear_error(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = make_run(write_experiment, tmp_path / "run")
    target = tmp_path / "tables.parquet"
    target.write_text("mine")
    result = invoke("export", run, "-o", target)
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # not an unexpected exception
    assert result.stderr.strip() == f"error: {target} is a file; pass a directory with -o"
    assert target.read_text() == "mine"


def test_csv_tables_give_factor_columns_back_their_declared_levels(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    """A text level "1" stays "1" and a number 2 stays 2 after a CSV round trip."""
    from backchannel.analysis import RunTables

    data = discussion_experiment(factors={"model": ["sim"], "variant": ["1", 2, True]})
    run, out = tmp_path / "run", tmp_path / "csv"
    assert invoke("run", write_experiment(data), "-o", run, "--limit", "6").exit_code == 0
    assert invoke("export", run, "-o", out, "--format", "csv").exit_code == 0
    variants = RunTables.from_directory(out).conversations["variant"].tolist()
    assert variants[0] == "1" and isinstance(variants[0], str)
    assert any(v == 2 and type(v) is int for v in variants)
    assert any(v is True for v in variants)
