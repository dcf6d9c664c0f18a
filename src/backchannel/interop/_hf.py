"""A run as a Hugging Face `datasets.DatasetDict` saved to disk, with a dataset card.

The splits are built from the run's own Parquet export (the store's `export_tables` writes it
into a scratch folder first), so the dataset has exactly the rows and columns of
`backchannel export --format parquet`: events, labels, conversations and the paradigm's own
tables, one split each.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import datasets
import pyarrow.parquet as pq
from datasets import Dataset, DatasetDict, DatasetInfo
from datasets.table import InMemoryTable

from backchannel.interop._card import card_text
from backchannel.interop._provenance import provenance

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.paradigms import Paradigm

CARD = "README.md"
MANIFEST = "manifest.json"


def write_hf_dataset(
    tables: RunTables,
    paradigm: Paradigm[Any] | None,
    own: Mapping[str, pd.DataFrame],
    folder: Path,
) -> list[str]:
    """Save the DatasetDict, the card and the manifest into `folder`; returns what it wrote."""
    from backchannel.store import export_tables

    found = provenance(tables, paradigm)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".parquet-") as scratch:
        written = export_tables(tables, Path(scratch), "parquet", dict(own))
        splits = {path.stem: pq.read_table(path) for path in written if path.suffix == ".parquet"}
        frames = {name: table.to_pandas() for name, table in splits.items()}
        card = card_text(tables, paradigm, frames, found)
        info = DatasetInfo(
            description=card.split("\n---\n", 1)[-1].strip(),
            license=found.license,
            citation=_citation(tables),
        )
        data = DatasetDict(
            {name: Dataset(InMemoryTable(table), info=info) for name, table in splits.items()}
        )
        # One shard per split: a split saved in no shard (an empty table) cannot be loaded.
        shards = {name: 1 for name, table in splits.items() if table.num_rows == 0}
        with _quiet():
            data.save_to_disk(str(folder), num_shards=shards or None)
        shutil.copyfile(Path(scratch) / MANIFEST, folder / MANIFEST)
    (folder / CARD).write_text(card, encoding="utf-8")
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


@contextmanager
def _quiet() -> Iterator[None]:
    """No progress bars on the terminal while saving (and the caller's setting kept)."""
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def _citation(tables: RunTables) -> str:
    manifest = tables.manifest
    return (
        f"backchannel run {manifest.get('run_id')} (experiment {manifest.get('name')}), "
        f"backchannel {manifest.get('package_version')}"
    )
