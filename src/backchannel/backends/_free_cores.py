"""How many cores the rest of the machine leaves free, so llama.cpp's threads fit in them.

llama.cpp's threads wait for each other at every step, so one thread that shares its core with
another busy process holds back all of them: on two cores with one kept busy, two threads
generated 47 tokens/s where the quiet machine gave 190. Sizing the threads to the free cores
when the model loads avoids that."""

from __future__ import annotations

import time

import psutil

from backchannel._cores import usable_cores

WINDOW_S = 0.2
"""How long the machine's use is sampled for: long enough to see a busy process, short
beside the model's load."""


def busy_elsewhere(window_s: float = WINDOW_S) -> float:
    """Cores kept busy by other processes over `window_s` (this process's own use left out)."""
    me = psutil.Process()
    machine_before, own_before, wall_before = psutil.cpu_times(), me.cpu_times(), time.monotonic()
    time.sleep(window_s)
    machine_after, own_after, wall_after = psutil.cpu_times(), me.cpu_times(), time.monotonic()
    total = sum(machine_after) - sum(machine_before)
    idle = _idle(machine_after) - _idle(machine_before)
    if total <= 0:
        return 0.0
    cores = psutil.cpu_count() or usable_cores()
    busy = cores * (total - idle) / total
    own = (own_after.user + own_after.system - own_before.user - own_before.system) / max(
        wall_after - wall_before, 1e-9
    )
    return max(0.0, busy - own)


def free_cores(window_s: float = WINDOW_S) -> int:
    """The usable cores less those other processes keep busy, rounded, and at least one."""
    free = usable_cores() - busy_elsewhere(window_s)
    return max(1, min(usable_cores(), int(free + 0.5)))


def _idle(times: object) -> float:
    """Idle time of a `psutil.cpu_times()` reading (with I/O wait, where the platform has it)."""
    return float(getattr(times, "idle", 0.0)) + float(getattr(times, "iowait", 0.0))
