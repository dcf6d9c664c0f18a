"""SIGTERM treated like Ctrl-C: a clean stop with a message and exit code 143 (128 + 15).

Outside an event loop the handler raises `Terminated`; inside `run`'s event loop the command
cancels its work instead, so every conversation already finished stays committed.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

EXIT_SIGTERM = 143
EXIT_SIGINT = 130
STOPPED_MESSAGE = "finished conversations are stored; run the same command to resume"


class Terminated(BaseException):
    """The process received SIGTERM (a BaseException, like KeyboardInterrupt, so that no
    `except Exception` swallows it)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> None:
    """Make SIGTERM raise `Terminated` in the main thread (a no-op in other threads)."""
    if in_main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


def terminable(command: F) -> F:
    """Run `command` with SIGTERM raising `Terminated`, restoring the previous handler after."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not in_main_thread():
            return command(*args, **kwargs)
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            return command(*args, **kwargs)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]
