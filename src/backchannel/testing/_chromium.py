"""Debian's Chromium for the browser tests and benchmarks: where it is, and the flags that keep
a headless run offline and quiet (no GPU, no sandbox, no background networking or updates)."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
"""The Chromium binary (Debian's package), or None where it is not installed."""

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
