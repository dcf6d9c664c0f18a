"""Export a run's tidy tables as Parquet or CSV, with the manifest as JSON."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pandas as pd

from backchannel._safe_text import csv_frame
from backchannel.analysis import RunTables
from backchannel.errors import RunDirectoryError

ExportFormat = Literal["parquet", "csv"]


TABLE_NAMES = ("events", "labels", "conversations")
_FORMATS = ("parquet", "csv")


def export_tables(
    tables: RunTables,
    directory: Path,
    fmt: ExportFormat,
    extra: Mapping[str, pd.DataFrame] | None = None,
) -> list[Path]:
    """Write events, labels and conversations (+ manifest.json), and a paradigm's `extra`
    tables by name, into `directory`.

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
        return _export(tables, directory, fmt, dict(extra or {}))
    except OSError as error:
        raise RunDirectoryError(
            f"cannot write the tables into {directory} ({error.strerror or error}); choose a "
            "writable "
            "directory with -o"
        ) from None


def _export(
    tables: RunTables, directory: Path, fmt: ExportFormat, extra: dict[str, pd.DataFrame]
) -> list[Path]:
    for stale in directory.glob(".export-*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    frames = {
        "events": tables.events,
        "labels": tables.labels,
        "conversations": tables.conversations,
        **extra,
    }
    names = [f"{name}.{fmt}" for name in frames]
    with tempfile.TemporaryDirectory(dir=directory, prefix=".export-") as staging:
        folder = Path(staging)
        for name, frame in zip(names, frames.values(), strict=True):
            if fmt == "parquet":
                _parquet_safe(frame).to_parquet(folder / name, index=False)
            else:
                csv_frame(frame).to_csv(folder / name, index=False)
        (folder / "manifest.json").write_text(
            json.dumps(tables.manifest, indent=2, sort_keys=True, default=str)
        )
        written = []
        for name in [*names, "manifest.json"]:
            target = directory / name
            os.replace(folder / name, target)
            written.append(target)
        for other in _FORMATS:
            if other != fmt:
                for table in frames:
                    (directory / f"{table}.{other}").unlink(missing_ok=True)
    return written


def _parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns whose values mix types (a factor with levels 1 and "x") become text."""
    mixed = [
        column
        for column in frame.columns
        if frame[column].dtype == object
        and len({type(v) for v in frame[column] if v is not None and v == v}) > 1
    ]
    if not mixed:
        return frame
    return frame.assign(**{c: frame[c].map(lambda v: None if v is None else str(v)) for c in mixed})
