"""Export a run's tidy tables as Parquet or CSV, with the manifest as JSON, in batches.

A run is written a batch of conversations at a time (`RunStore.batches`), so an export's memory
is that of one batch, whatever the run's size. CSV appends each batch's rows under one header.
Parquet writes each batch as a piece first; the pieces' column types are unified (a column that
is empty in one batch and text in another is text) and copied, one piece at a time, into one
file per table, which reads back as the whole table would.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from backchannel._safe_text import csv_frame
from backchannel.errors import RunDirectoryError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from backchannel.analysis import RunTables

ExportFormat = Literal["parquet", "csv"]
Extra = Callable[["RunTables"], Mapping[str, "pd.DataFrame"]]

TABLE_NAMES = ("events", "labels", "conversations", "prompts")
_FORMATS = ("parquet", "csv")
_COMPRESSION = "zstd"


def export_tables(
    tables: RunTables,
    directory: Path,
    fmt: ExportFormat,
    extra: Mapping[str, pd.DataFrame] | None = None,
) -> list[Path]:
    """Write events, labels, conversations, prompts (+ manifest.json), and a paradigm's `extra`
    tables by name, into `directory` (see `export_batches`)."""
    given = dict(extra or {})
    return export_batches([tables], directory, fmt, lambda _: given)


def export_batches(
    batches: Iterable[RunTables],
    directory: Path,
    fmt: ExportFormat,
    extra: Extra | None = None,
) -> list[Path]:
    """Write the tables of every batch (one run's conversations, in order) into `directory`,
    with `extra(batch)` (a paradigm's own tables, built from each batch's conversations).

    Files are written to a temporary folder first and moved in place only when all succeeded,
    so a failed export leaves no half-written set of tables. The export replaces every table
    of the folder: tables of the other format from an earlier export are removed, and so are
    staging folders a killed export left behind. CSV text cells are neutralised (see
    `csv_cell`); Parquet keeps the exact text.
    """
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory with -o")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return _export(batches, directory, fmt, extra)
    except OSError as error:
        raise RunDirectoryError(
            f"cannot write the tables into {directory} ({error.strerror or error}); choose a "
            "writable directory with -o"
        ) from None


def _frames(tables: RunTables, extra: Extra | None) -> dict[str, pd.DataFrame]:
    return {
        "events": tables.events,
        "labels": tables.labels,
        "conversations": tables.conversations,
        "prompts": tables.prompts,
        **(extra(tables) if extra is not None else {}),
    }


def _export(
    batches: Iterable[RunTables], directory: Path, fmt: ExportFormat, extra: Extra | None
) -> list[Path]:
    for stale in directory.glob(".export-*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".export-") as staging:
        folder = Path(staging)
        pieces: dict[str, list[Path]] = {}
        manifest: dict[str, Any] = {}
        text_columns: set[str] = set()
        for index, tables in enumerate(batches):
            if index == 0:
                manifest = tables.manifest
                text_columns = _mixed_factors(manifest)
            for name, frame in _frames(tables, extra).items():
                paths = pieces.setdefault(name, [])
                if fmt == "csv":
                    target = folder / f"{name}.csv"
                    with target.open("a", newline="") as handle:
                        csv_frame(frame).to_csv(handle, index=False, header=not paths)
                    paths.append(target)
                else:
                    piece = folder / f"{name}.{len(paths)}.piece"
                    _write_piece(_parquet_safe(frame, text_columns), piece)
                    paths.append(piece)
        if fmt == "parquet":
            for name, paths in pieces.items():
                _join_pieces(paths, folder / f"{name}.parquet")
        (folder / "manifest.json").write_text(
            json.dumps(manifest, indent=2, sort_keys=True, default=str)
        )
        names = [f"{name}.{fmt}" for name in pieces]
        written = []
        for name in [*names, "manifest.json"]:
            target = directory / name
            os.replace(folder / name, target)
            written.append(target)
        for other in _FORMATS:
            if other != fmt:
                for table in pieces:
                    (directory / f"{table}.{other}").unlink(missing_ok=True)
    return written


def _write_piece(frame: pd.DataFrame, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, compression="none")


def _join_pieces(paths: list[Path], target: Path) -> None:
    """One Parquet file from the pieces, their column types unified, a piece at a time."""
    import pyarrow.parquet as pq

    schemas = [pq.read_schema(path) for path in paths]
    schema = _unified(schemas)
    with pq.ParquetWriter(target, schema, compression=_COMPRESSION) as writer:
        for path in paths:
            table = pq.read_table(path)
            writer.write_table(_cast(table, schema))
            path.unlink()


def _unified(schemas: list[pa.Schema]) -> pa.Schema:
    """Each column's type over all pieces (null gives way to any type, differing types become
    text), with the pandas metadata of the first piece where the column is not all null."""
    import pyarrow as pa

    first = schemas[0]
    fields = []
    entries: dict[str, Any] = {}
    for i, name in enumerate(first.names):
        types = [s.field(i).type for s in schemas]
        known = [t for t in types if not pa.types.is_null(t)]
        chosen = known[0] if known else types[0]
        if any(t != chosen for t in known):
            chosen = pa.large_string()
        fields.append(pa.field(name, chosen))
        for schema, kind in zip(schemas, types, strict=True):
            if not pa.types.is_null(kind) or schema is schemas[-1]:
                entries[name] = _pandas_entry(schema, name)
                break
    pandas = json.loads((first.metadata or {}).get(b"pandas", b"{}"))
    if pandas.get("columns"):
        pandas["columns"] = [entries.get(c["name"]) or c for c in pandas["columns"]]
    return pa.schema(fields, metadata={b"pandas": json.dumps(pandas).encode()})


def _pandas_entry(schema: pa.Schema, name: str) -> Any:
    pandas = json.loads((schema.metadata or {}).get(b"pandas", b"{}"))
    return next((c for c in pandas.get("columns", []) if c.get("name") == name), None)


def _cast(table: pa.Table, schema: pa.Schema) -> pa.Table:
    import pyarrow as pa

    columns = []
    for field, column in zip(schema, table.columns, strict=True):
        if column.type == field.type:
            columns.append(column)
        elif pa.types.is_large_string(field.type) and not pa.types.is_null(column.type):
            columns.append(column.cast(pa.string()).cast(field.type))
        else:
            columns.append(column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _mixed_factors(manifest: dict[str, Any]) -> set[str]:
    """Factor columns whose declared levels mix types: written as text in every batch."""
    resolved = manifest.get("config_resolved") or {}
    levels = resolved.get("factors") or {} if isinstance(resolved, dict) else {}
    return {
        name
        for name, values in levels.items()
        if isinstance(values, list) and len({type(v) for v in values if v is not None}) > 1
    }


def _parquet_safe(frame: pd.DataFrame, text: set[str]) -> pd.DataFrame:
    """Columns whose values mix types (a factor with levels 1 and "x") become text, and
    categorical columns (names and metas the store keeps as codes) plain text: the files keep
    the types docs/data-schema.md lists, for readers without pandas."""
    import pandas as pd

    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if categorical:
        frame = frame.assign(**{str(c): frame[c].astype("str") for c in categorical})
    mixed = [
        column
        for column in frame.columns
        if column in text
        or (
            frame[column].dtype == object
            and len({type(v) for v in frame[column] if v is not None and v == v}) > 1
        )
    ]
    if not mixed:
        return frame
    return frame.assign(**{c: frame[c].map(lambda v: None if v is None else str(v)) for c in mixed})
