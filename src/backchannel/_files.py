"""What kind of thing a path names, so a message about a file the user gave names the right
problem: a missing file, a directory, or something that is not a regular file at all (a FIFO,
a device such as /dev/zero), which would block or never end if read."""

from __future__ import annotations

import stat
from pathlib import Path


def path_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file ("does not exist", "is a directory", "is a FIFO
    (named pipe), not a regular file", ...), or None for a regular file (or a link to one)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except NotADirectoryError:
        return "does not exist (a part of the path is a file)"
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a file")
    return f"is {kind}, not a regular file"
