"""Facts about the code that produced a run: package version, git commit, dirty tree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from backchannel._version import __version__


def provenance() -> dict[str, Any]:
    source = Path(__file__).resolve().parent
    facts: dict[str, Any] = {"package_version": __version__, "git_commit": None, "git_dirty": None}
    try:
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return facts
    facts["git_commit"] = commit
    facts["git_dirty"] = bool(status.strip())
    return facts
