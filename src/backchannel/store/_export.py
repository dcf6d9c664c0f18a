"""Export a run's tidy tables as Parquet or CSV, with the manifest as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from backchannel.analysis import RunTables

ExportFormat = Literal["parquet", "csv"]


def export_tables(tables: RunTables, directory: Path, fmt: ExportFormat) -> list[Path]:
    """Write events, labels and conversations (+ manifest.json) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in (
        ("events", tables.events),
        ("labels", tables.labels),
        ("conversations", tables.conversations),
    ):
        path = directory / f"{name}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
        written.append(path)
    manifest = directory / "manifest.json"
    manifest.write_text(json.dumps(tables.manifest, indent=2, sort_keys=True, default=str))
    written.append(manifest)
    return written
