"""Shared pieces of the commands: error handling, consoles, opening stored runs."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from backchannel import _signals
from backchannel.errors import BackchannelError, ConfigError, RunDirectoryError

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.paradigms import Paradigm

err = Console(stderr=True, highlight=False)
out = Console(highlight=False)
F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(command: F) -> F:
    """One clear message and the right exit code for every expected failure."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BackchannelError as error:
            # The message is text, not markup: `pip install 'backchannel[ray]'` keeps its brackets.
            err.print(f"[bold red]error:[/] {escape(str(error))}", markup=True, soft_wrap=True)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            err.print(f"interrupted: {_signals.STOPPED_MESSAGE}")
            raise typer.Exit(_signals.EXIT_SIGINT) from None
        except _signals.Terminated:
            err.print(f"stopped by SIGTERM: {_signals.STOPPED_MESSAGE}")
            raise typer.Exit(_signals.EXIT_SIGTERM) from None
        except OSError as error:
            # A file problem no command foresaw: one line, not a traceback.
            where = f"{error.filename}: " if error.filename else ""
            err.print(
                f"[bold red]error:[/] {where}{error.strerror or error}; check the path and its "
                "permissions",
                markup=True,
                soft_wrap=True,
            )
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def load_tables(run: Path | None, tables_dir: Path | None) -> RunTables:
    """Tables of a stored run directory, or of exported tables (`--tables DIR`)."""
    from backchannel.store import RunStore

    if tables_dir is not None:
        if run is not None:
            raise ConfigError(
                f"give a run directory ({run}) or --tables {tables_dir}, not both; the command "
                "reads one of them"
            )
        return _exported_tables(tables_dir)
    if run is None:
        raise RunDirectoryError("give a run directory, or exported tables with --tables DIR")
    store = RunStore(run, readonly=True)
    try:
        return store.tables()
    finally:
        store.close()


def _exported_tables(directory: Path) -> RunTables:
    """Tables of `backchannel export`; a folder holding both formats is ambiguous."""
    from backchannel.analysis import RunTables

    if not directory.is_dir():
        raise RunDirectoryError(
            f"{directory} is not a folder of exported tables; write one with "
            "`backchannel export RUN -o DIR`"
        )
    both = [
        name
        for name in ("events", "labels", "conversations")
        if (directory / f"{name}.parquet").exists() and (directory / f"{name}.csv").exists()
    ]
    if both:
        raise RunDirectoryError(
            f"{directory} holds {both[0]} tables as both Parquet and CSV, so it is unclear which "
            "export is current; export again into this folder (it replaces all tables) or an "
            "empty one"
        )
    try:
        return RunTables.from_directory(directory)
    except FileNotFoundError as error:
        raise RunDirectoryError(str(error)) from None
    except (OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RunDirectoryError(
            f"{directory}: cannot read the exported tables ({first}); export them again"
        ) from None


def paradigm_of(tables: RunTables) -> Paradigm[Any]:
    from backchannel.paradigms import get_paradigm

    name = tables.manifest.get("paradigm")
    if not name:
        raise RunDirectoryError("the run has no manifest naming its paradigm")
    return get_paradigm(str(name))


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def describe_counts(counts: dict[str, int]) -> str:
    return f"{counts['done']} done, {counts['incomplete']} incomplete, {counts['failed']} failed"


def print_errors(errors: list[tuple[str, int, str]], run: Path | None = None) -> None:
    """The distinct errors of unfinished conversations, with one example each, and (given the
    run) where each one's whole stored traceback is shown."""
    for line, count, example in errors:
        err.print(f"  {count} x {line}  (e.g. {example})", markup=False, highlight=False)
    if run is not None and errors:
        err.print(
            f"  the whole traceback of each is stored: backchannel status {run} --errors, or the "
            f"conversation's page in backchannel view {run}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


SKIPPED_SHOWN = 10
"""Skipped rows named one by one in a command's output; the rest are counted."""


def print_skipped(skipped: list[dict[str, str]]) -> None:
    """The rows of the data that became no conversation, each with its reason (on stderr)."""
    if not skipped:
        return
    rows = "row" if len(skipped) == 1 else "rows"
    err.print(
        f"note: {len(skipped)} {rows} of the data became no conversation (all in the manifest's "
        "skipped_items):",
        markup=False,
        soft_wrap=True,
    )
    for entry in skipped[:SKIPPED_SHOWN]:
        err.print(
            f"  dataset {entry['source']!r}, {entry['item']}: {entry['reason']}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if len(skipped) > SKIPPED_SHOWN:
        err.print(f"  ... and {len(skipped) - SKIPPED_SHOWN} more", markup=False)
