"""The cores this process may use: what sizes llama.cpp's threads and a store's parallel reads."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
