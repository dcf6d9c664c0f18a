"""Work done in a forked copy of this process while this one goes on with other work.

An analysis of a large run is Python-bound (pandas, numpy and the interpreter), so threads
would take turns on one core. A fork shares the tables already in memory, page by page, for
free; the child computes its part and sends back only the result, pickled. Where there is no
fork, or one usable core, or the child fails for any reason, the work is done here instead,
so a result never depends on how it was computed and an error is the one the work raises in
this process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any, Generic, TypeVar

from backchannel._cores import usable_cores

T = TypeVar("T")

_running = 0
"""Children of this process started by `Beside` and not yet finished."""


class Beside(Generic[T]):
    """`work()` started beside this process: `result()` waits for it, `abandon()` drops it.
    `in_child` runs first in the child only (to keep it off what it must not share, such as
    the parent's database connection); `fork` overrides `can_fork()`. As a context manager,
    a child whose result was not asked for when the block ends (it raised, or returned
    early) is abandoned."""

    def __init__(
        self,
        work: Callable[[], T],
        *,
        in_child: Callable[[], None] | None = None,
        fork: bool | None = None,
    ) -> None:
        self._work = work
        self._in_child = in_child
        self.answered_here = False
        """Whether `result()` computed the value in this process (no child, or it gave none)."""
        self._process: Any = None
        self._receive: Connection | None = None
        if fork if fork is not None else can_fork():
            self._start()

    @property
    def forked(self) -> bool:
        """Whether the work runs in a child process (otherwise `result()` runs it here)."""
        return self._process is not None

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        # Whatever this process has buffered would be written again by the child's exit.
        sys.stdout.flush()
        sys.stderr.flush()
        process = context.Process(target=_run, args=(self._work, self._in_child, send), daemon=True)
        # Until the child is in `_run`, a signal would run this process's handlers there
        # (Ctrl-C's KeyboardInterrupt, or a library's SIGTERM handler raising SystemExit)
        # and unwind the parent's stack in the child: held back over the fork.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        send.close()
        self._process, self._receive = process, receive
        global _running
        _running += 1

    def result(self) -> T:
        """The work's value: the child's, or computed here when there is no child or it gave
        none (it raised, or it died)."""
        if self._process is None or self._receive is None:
            self.answered_here = True
            return self._work()
        try:
            status, value = self._receive.recv()
        except (EOFError, OSError):
            status, value = "failed", None
        finally:
            self._finish()
        if status == "ok":
            found: T = value
            return found
        self.answered_here = True
        return self._work()

    def __enter__(self) -> Beside[T]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.abandon()

    def abandon(self) -> None:
        """Stop the child, whose result is not needed (SIGKILL: it holds nothing to clean up,
        and no handler it inherited may run)."""
        if self._process is not None:
            self._process.kill()
            self._finish()

    def _finish(self) -> None:
        if self._receive is not None:
            self._receive.close()
        if self._process is not None:
            self._process.join()
            global _running
            _running -= 1
        self._process, self._receive = None, None


def can_fork() -> bool:
    """A forked child can run beside this process: Linux (where a fork of a process holding
    numerical libraries is safe) with a usable core free of this process and the children it
    already runs beside it. More children than cores would only take turns, each holding its
    own copy of what it changes; the work is then done here, when its value is asked for."""
    return sys.platform.startswith("linux") and usable_cores() > 1 + _running


_HELD = {signal.SIGINT, signal.SIGTERM}
"""Signals held back while a child is forked, until it runs `_run`."""


def _run(work: Callable[[], Any], in_child: Callable[[], None] | None, send: Connection) -> None:
    """The child: the work's value, or word that it failed (this process then computes it).
    It ends on SIGINT or SIGTERM at once, by their default action, not by the handlers of the
    process it was forked from."""
    for number in _HELD:
        # Where a handler cannot be reset (not the main thread), an exception it raises is
        # caught below like any failure of the work.
        with contextlib.suppress(ValueError):
            signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    try:
        if in_child is not None:
            in_child()
        outcome: tuple[str, Any] = ("ok", work())
    except BaseException:  # any failure is redone by the parent, which raises it there
        outcome = ("failed", None)
    try:
        send.send(outcome)
    except Exception:  # an unpicklable value: the parent computes it itself
        send.send(("failed", None))
    finally:
        send.close()
