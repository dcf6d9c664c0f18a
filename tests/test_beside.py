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
