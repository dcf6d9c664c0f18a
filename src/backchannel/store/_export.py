"""Export a run's tidy tables as Parquet or CSV, with the manifest as JSON."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Literal

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.errors import RunDirectoryError

ExportFormat = Literal["parquet", "csv"]


def export_tables(tables: RunTables, directory: Path, fmt: ExportFormat) -> list[Path]:
    """Write events, labels and conversations (+ manifest.json) into `directory`.

    Files are written to a temporary folder first and moved in place only when all succeeded,
    so a failed export leaves no half-written set of tables.
    """
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory with -o")
    directory.mkdir(parents=True, exist_ok=True)
    names = [f"{name}.{fmt}" for name in ("events", "labels", "conversations")]
    with tempfile.TemporaryDirectory(dir=directory, prefix=".export-") as staging:
        folder = Path(staging)
        for name, frame in zip(
            names, (tables.events, tables.labels, tables.conversations), strict=True
        ):
            if fmt == "parquet":
                _parquet_safe(frame).to_parquet(folder / name, index=False)
            else:
                frame.to_csv(folder / name, index=False)
        (folder / "manifest.json").write_text(
            json.dumps(tables.manifest, indent=2, sort_keys=True, default=str)
        )
        written = []
        for name in [*names, "manifest.json"]:
            target = directory / name
            os.replace(folder / name, target)
            written.append(target)
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
