"""Work beside this process: the child's value, the child kept off what it must not touch, and
every way a child can fail ending in the value (or the error) the work gives here."""

from __future__ import annotations

import os
import sys

import pytest

from backchannel._beside import Beside

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux")

_IN_CHILD: list[str] = []


def test_the_value_comes_from_the_child() -> None:
    beside = Beside(os.getpid, fork=True)
    assert beside.forked
    assert beside.result() != os.getpid()
    assert not beside.answered_here


def test_in_child_runs_in_the_child_only() -> None:
    beside = Beside(lambda: list(_IN_CHILD), in_child=lambda: _IN_CHILD.append("child"), fork=True)
    assert beside.result() == ["child"]
    assert _IN_CHILD == []


def test_an_error_in_the_child_is_raised_by_the_work_here() -> None:
    calls: list[int] = []

    def failing() -> int:
        calls.append(os.getpid())
        raise ValueError("no such judge")

    beside = Beside(failing, fork=True)
    with pytest.raises(ValueError, match="no such judge"):
        beside.result()
    assert calls == [os.getpid()]  # the parent's own call; the child's list is its own
    assert beside.answered_here


def test_a_child_that_dies_leaves_the_work_to_this_process() -> None:
    beside = Beside(os.getpid, in_child=lambda: os._exit(3), fork=True)
    assert beside.result() == os.getpid()
    assert beside.answered_here


def test_a_value_that_cannot_be_sent_is_computed_here() -> None:
    here = os.getpid()
    beside = Beside(lambda: lambda: here, fork=True)  # a lambda does not pickle
    assert beside.result()() == here
    assert beside.answered_here


def test_an_abandoned_child_is_stopped() -> None:
    import time

    beside = Beside(lambda: time.sleep(600), fork=True)
    process = beside._process
    beside.abandon()
    assert process is not None and not process.is_alive()
    assert not beside.forked


def test_without_a_fork_the_work_runs_when_its_value_is_asked_for() -> None:
    calls: list[int] = []

    def work() -> int:
        calls.append(1)
        return len(calls)

    beside = Beside(work, fork=False)
    assert not beside.forked and calls == []
    assert beside.result() == 1
    assert beside.answered_here


def test_a_block_that_raises_stops_the_child() -> None:
    import time

    with pytest.raises(KeyError), Beside(lambda: time.sleep(600), fork=True) as beside:
        process = beside._process
        raise KeyError("gone")
    assert process is not None and not process.is_alive()
    assert not beside.forked


def test_a_block_that_took_the_result_ends_with_the_value() -> None:
    with Beside(os.getpid, fork=True) as beside:
        value = beside.result()
    assert value != os.getpid() and not beside.forked


def test_a_child_is_forked_only_while_a_core_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from backchannel import _beside

    monkeypatch.setattr(_beside, "usable_cores", lambda: 2)
    first = Beside(lambda: time.sleep(600))
    second = Beside(os.getpid)  # the second core is the first child's
    assert first.forked and not second.forked
    assert second.result() == os.getpid()
    first.abandon()
    third = Beside(os.getpid)  # the core is free again
    assert third.forked
    assert third.result() != os.getpid()
    monkeypatch.setattr(_beside, "usable_cores", lambda: 1)
    assert not Beside(os.getpid).forked


def test_a_signal_ends_the_child_by_its_default_action_not_an_inherited_handler() -> None:
    import signal
    import time

    parent = os.getpid()

    def raising(number: int, frame: object) -> None:  # as some libraries install
        if os.getpid() != parent:  # a child that ran it escaped into this test: end it
            os._exit(1)
        raise SystemExit(number)

    previous = signal.signal(signal.SIGTERM, raising)
    try:
        for _ in range(20):  # the signal lands at once, while the child may still be forking
            beside = Beside(lambda: time.sleep(600), fork=True)
            process = beside._process
            assert process is not None
            os.kill(process.pid, signal.SIGTERM)
            process.join(timeout=60)
            assert process.exitcode == -signal.SIGTERM
            beside.abandon()
    finally:
        signal.signal(signal.SIGTERM, previous)
