"""`backchannel export RUN --format inspect|hf`: read the run, then write the format's folder
atomically (see `write_folder`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from backchannel.interop._extras import need
from backchannel.interop._folder import write_folder

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.paradigms import Paradigm

InteropFormat = Literal["inspect", "hf"]
INTEROP_FORMATS: tuple[str, ...] = ("inspect", "hf")
_LIBRARY = {"inspect": "inspect_ai", "hf": "datasets"}


@dataclass
class Exported:
    """What an export wrote, and what it could not include (said to the user)."""

    paths: list[Path]
    notes: list[str] = field(default_factory=list)
    run_state: dict[str, Any] | None = None
    """The run's state when it was read (`complete`, counts): an export of an unfinished run
    is said to be one."""


def export_run(run: Path, output: Path, fmt: InteropFormat, *, force: bool = False) -> Exported:
    """Export the stored run `run` into the folder `output` in format `fmt`.

    The format's library is checked first (a missing extra is a ConfigError naming the
    `pip install`), the run is only read, and `output` is replaced only with `force` and only
    when it holds an earlier export of the same format.
    """
    if fmt not in _LIBRARY:
        from backchannel.errors import ConfigError

        raise ConfigError(f"unknown export format {fmt!r}; use one of {', '.join(_LIBRARY)}")
    need(_LIBRARY[fmt])
    from backchannel.store import RunStore

    store = RunStore(run, readonly=True)
    try:
        tables = store.tables()
    finally:
        store.close()
    notes: list[str] = []
    paradigm = _paradigm(tables, notes)
    about = {
        "run_id": tables.manifest.get("run_id"),
        "package_version": tables.manifest.get("package_version"),
    }
    if fmt == "inspect":
        from backchannel.interop._inspect import write_inspect_logs

        sets = label_sets(paradigm)
        paths = write_folder(
            output, fmt, about, lambda folder: write_inspect_logs(tables, sets, folder), force=force
        )
    else:
        from backchannel.interop._hf import write_hf_dataset

        own = paradigm.tables(tables) if paradigm is not None else {}
        paths = write_folder(
            output,
            fmt,
            about,
            lambda folder: write_hf_dataset(tables, paradigm, own, folder),
            force=force,
        )
    return Exported(paths, notes, tables.manifest.get("run_state"))


def label_sets(paradigm: Paradigm[Any] | None) -> set[str]:
    """Every label of the paradigm's judge tasks (empty without the paradigm)."""
    if paradigm is None:
        return set()
    return {label for task in paradigm.judge_tasks() for label in task.labels}


def _paradigm(tables: RunTables, notes: list[str]) -> Paradigm[Any] | None:
    from backchannel.errors import ConfigError
    from backchannel.paradigms import get_paradigm

    name = tables.manifest.get("paradigm")
    if not name:
        notes.append("the run has no manifest naming its paradigm: its own tables are left out")
        return None
    try:
        return get_paradigm(str(name))
    except ConfigError as error:
        notes.append(f"only the common tables and figures are written: {error}")
        return None
