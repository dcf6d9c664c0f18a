"""Runs where researchers already work: Inspect `.eval` logs, Hugging Face datasets, and SQL
over many runs through DuckDB.

Each format's library is an optional extra (`backchannel[inspect]`, `[hf]`, `[query]`),
imported only when the format is used; a missing one is a ConfigError naming the install.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.interop._export import INTEROP_FORMATS, Exported, InteropFormat, export_run
    from backchannel.interop._extras import EXTRAS, install_hint, need
    from backchannel.interop._query import RUN_COLUMN, Runs, open_runs, run_labels

__all__ = [
    "EXTRAS",
    "INTEROP_FORMATS",
    "RUN_COLUMN",
    "Exported",
    "InteropFormat",
    "Runs",
    "export_run",
    "install_hint",
    "need",
    "open_runs",
    "run_labels",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._export": ("INTEROP_FORMATS", "Exported", "InteropFormat", "export_run"),
            "._extras": ("EXTRAS", "install_hint", "need"),
            "._query": ("RUN_COLUMN", "Runs", "open_runs", "run_labels"),
        },
    )
