"""Write an export folder atomically: a killed export leaves the previous folder or none, never
a mix, and an earlier export is replaced only when asked (`--force`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backchannel.errors import RunDirectoryError

MARKER = ".backchannel-export.json"
"""Written into every interop export: its format and run, so `--force` replaces only a folder
that an export of the same format wrote (never a run directory or someone's documents)."""


def write_folder(
    target: Path,
    fmt: str,
    about: dict[str, Any],
    write: Callable[[Path], list[str]],
    *,
    force: bool,
) -> list[Path]:
    """Run `write(staging)` in a hidden folder beside `target`, then move it into place.

    `write` returns the names of what it wrote (relative to the folder). A non-empty `target`
    is refused unless `force` is set and it holds an earlier export of `fmt`.
    """
    _check_target(target, fmt, force=force)
    try:
        parent = target.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{target.name}.export-"
        for stale in parent.glob(prefix + "*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    except OSError as error:
        raise _unwritable(target, error) from None
    try:
        names = write(staging)
        (staging / MARKER).write_text(
            json.dumps({"format": fmt, **about}, indent=2, sort_keys=True, default=str),
            encoding="utf-8",
        )
        _move_into_place(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise _unwritable(target, error) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [target / name for name in names]


def _check_target(target: Path, fmt: str, *, force: bool) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise RunDirectoryError(f"{target} is a file; pass a folder for the export with -o")
    if not any(target.iterdir()):
        return
    if not force:
        raise RunDirectoryError(
            f"{target} is not empty; pass --force to replace the earlier {fmt} export there, "
            "or choose a new folder with -o"
        )
    if _marker_format(target) != fmt:
        raise RunDirectoryError(
            f"{target} is not an earlier {fmt} export of backchannel (no {MARKER} of that "
            "format), so --force does not replace it; choose a new or empty folder with -o"
        )


def _marker_format(folder: Path) -> str | None:
    try:
        about = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(about.get("format")) if isinstance(about, dict) else None


def _move_into_place(staging: Path, target: Path) -> None:
    """A rename onto a missing or empty folder is atomic; a full one is first renamed aside
    (a kill between the two renames leaves no folder, and the next export removes the old)."""
    if target.is_dir() and any(target.iterdir()):
        old = staging.with_name(staging.name + "-replaced")
        os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, target)


def _unwritable(target: Path, error: OSError) -> RunDirectoryError:
    return RunDirectoryError(
        f"cannot write the export into {target} ({error.strerror or error}); choose a writable "
        "folder with -o"
    )
