"""The free-core count that sizes llama.cpp's threads: other processes' use, never our own."""

from __future__ import annotations

import subprocess
import sys
from collections import namedtuple
from collections.abc import Iterator

import psutil
import pytest

from backchannel.backends import _free_cores
from backchannel.backends._free_cores import busy_elsewhere, free_cores

Machine = namedtuple("Machine", "user system idle iowait")
Own = namedtuple("Own", "user system")


def _fake(
    monkeypatch: pytest.MonkeyPatch,
    cores: int,
    machine: list[Machine],
    own: list[Own],
    clock: list[float],
) -> None:
    """Readings before and after the window: the machine's summed times, ours, the clock."""
    machine_readings: Iterator[Machine] = iter(machine)
    own_readings: Iterator[Own] = iter(own)
    clock_readings: Iterator[float] = iter(clock)

    class FakeProcess:
        def cpu_times(self) -> Own:
            return next(own_readings)

    monkeypatch.setattr(psutil, "cpu_times", lambda: next(machine_readings))
    monkeypatch.setattr(psutil, "Process", FakeProcess)
    monkeypatch.setattr(psutil, "cpu_count", lambda: cores)
    monkeypatch.setattr(_free_cores, "usable_cores", lambda: cores)
    monkeypatch.setattr(_free_cores.time, "monotonic", lambda: next(clock_readings))
    monkeypatch.setattr(_free_cores.time, "sleep", lambda seconds: None)


def test_one_core_busy_elsewhere_leaves_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2 cores over 1 s: 2 core-seconds, of which 1.5 busy; 0.5 of them are this process's own.
    _fake(
        monkeypatch,
        2,
        [Machine(10, 0, 10, 0), Machine(11.25, 0.25, 10.5, 0)],
        [Own(1, 0), Own(1.25, 0.25)],
        [0.0, 1.0],
    )
    assert busy_elsewhere() == pytest.approx(1.0)
    _fake(
        monkeypatch,
        2,
        [Machine(10, 0, 10, 0), Machine(11.25, 0.25, 10.5, 0)],
        [Own(1, 0), Own(1.25, 0.25)],
        [0.0, 1.0],
    )
    assert free_cores() == 1


def test_own_use_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # Everything busy on the machine is this process: both cores count as free.
    _fake(
        monkeypatch,
        2,
        [Machine(0, 0, 0, 0), Machine(1.5, 0.5, 0, 0)],
        [Own(0, 0), Own(1.5, 0.5)],
        [0.0, 1.0],
    )
    assert free_cores() == 2


def test_io_wait_is_idle_and_a_full_machine_keeps_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake(
        monkeypatch,
        4,
        [Machine(0, 0, 0, 0), Machine(3, 0, 0, 1)],
        [Own(0, 0), Own(0, 0)],
        [0.0, 1.0],
    )
    assert busy_elsewhere() == pytest.approx(3.0)
    _fake(
        monkeypatch,
        4,
        [Machine(0, 0, 0, 0), Machine(4, 0, 0, 0)],
        [Own(0, 0), Own(0, 0)],
        [0.0, 1.0],
    )
    assert free_cores() == 1


def test_a_busy_process_is_seen() -> None:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert busy_elsewhere(0.5) > 0.5
    finally:
        spinner.kill()
        spinner.wait()
