"""Scripted failures for the fake server: one entry is consumed per chat-completions request.

A script is written as plain tuples so tests read naturally::

    faults=[("status", 429, 0), ("status", 429, 0)]   # two rate limits, then normal service
    faults=[None, ("status", 500), ("delay", 0.3), ("disconnect",)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StatusFault:
    """Answer at once with this HTTP status and an OpenAI-style error body (no slot is used)."""

    status: int
    retry_after: float | None = None

    def __post_init__(self) -> None:
        if not 400 <= self.status <= 599:
            raise ValueError(f"a status fault needs a 4xx or 5xx status, got {self.status}")
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError("retry_after must be >= 0")


@dataclass(frozen=True)
class DelayFault:
    """Serve normally but hold the slot this many extra seconds (a slow response)."""

    seconds: float

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ValueError("a delay must be >= 0 seconds")


@dataclass(frozen=True)
class DisconnectFault:
    """Drop the connection without sending a response."""


Fault = StatusFault | DelayFault | DisconnectFault


def parse_fault(entry: Any) -> Fault | None:
    """Turn one script entry (None, a tuple, or a fault object) into a fault value."""
    if entry is None or isinstance(entry, StatusFault | DelayFault | DisconnectFault):
        return entry
    if not isinstance(entry, tuple | list) or not entry:
        raise ValueError(f"a fault is None or a non-empty tuple, got {entry!r}")
    kind, *args = entry
    if kind == "status" and len(args) in (1, 2):
        retry_after = float(args[1]) if len(args) == 2 and args[1] is not None else None
        return StatusFault(int(args[0]), retry_after)
    if kind == "delay" and len(args) == 1:
        return DelayFault(float(args[0]))
    if kind == "disconnect" and not args:
        return DisconnectFault()
    raise ValueError(f"unknown fault {entry!r}")


def parse_script(entries: Iterable[Any]) -> list[Fault | None]:
    """Validate a whole script up front so a typo fails when the server is built, not mid-test."""
    return [parse_fault(entry) for entry in entries]
