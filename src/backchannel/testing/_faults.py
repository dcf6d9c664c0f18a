"""Scripted failures for the fake server: one entry is consumed per chat-completions request.

A script is written as plain tuples so tests read naturally::

    faults=[("status", 429, 0), ("status", 429, 0)]   # two rate limits, then normal service
    faults=[None, ("status", 500), ("delay", 0.3), ("disconnect",)]
    faults=[("html",), ("truncated",), ("empty_choices",), ("body", "oops", "text/plain")]
    faults=[("not_utf8",), ("trickle", 3.0)]   # a body that is not UTF-8, a body sent slowly

`mixed_script` draws a seeded script in which a share of the requests fail in chosen ways.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
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


# A chat completion cut off mid-body, as a proxy or a crashed worker leaves it.
TRUNCATED_JSON = '{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"index": 0, "mes'
HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
EMPTY_CHOICES = json.dumps({"id": "chatcmpl-empty", "object": "chat.completion", "choices": []})


# A chat completion whose answer holds bytes that are not UTF-8 (a server writing Latin-1, a
# proxy cutting a multi-byte character): the JSON cannot even be decoded to text.
NOT_UTF8 = (
    b'{"id": "chatcmpl-bytes", "object": "chat.completion", "choices": [{"index": 0, "message": '
    b'{"role": "assistant", "content": "caf\xe9 \xff\xfe"}, "finish_reason": "stop"}]}'
)


@dataclass(frozen=True)
class BodyFault:
    """Answer 200 at once with this raw body (text, or bytes sent as they are) instead of a chat
    completion."""

    body: str | bytes
    content_type: str = "application/json"

    def __post_init__(self) -> None:
        if "/" not in self.content_type:
            raise ValueError(f"a content type is 'type/subtype', got {self.content_type!r}")


@dataclass(frozen=True)
class TrickleFault:
    """Serve a normal completion but send its body a few bytes at a time over `seconds`, so
    the wait between two reads stays short while the whole call takes long."""

    seconds: float

    def __post_init__(self) -> None:
        if self.seconds <= 0:
            raise ValueError("a trickle lasts more than 0 seconds")


Fault = StatusFault | DelayFault | DisconnectFault | BodyFault | TrickleFault
_FAULT_TYPES = (StatusFault, DelayFault, DisconnectFault, BodyFault, TrickleFault)
_BODIES = {
    "html": BodyFault(HTML_PAGE, "text/html"),
    "truncated": BodyFault(TRUNCATED_JSON),
    "empty_choices": BodyFault(EMPTY_CHOICES),
    "not_utf8": BodyFault(NOT_UTF8),
}


def parse_fault(entry: Any) -> Fault | None:
    """Turn one script entry (None, a tuple, or a fault object) into a fault value."""
    if entry is None or isinstance(entry, _FAULT_TYPES):
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
    if kind == "trickle" and len(args) == 1:
        return TrickleFault(float(args[0]))
    if kind in _BODIES and not args:
        return _BODIES[kind]
    if kind == "body" and len(args) in (1, 2):
        body = args[0] if isinstance(args[0], bytes) else str(args[0])
        return BodyFault(body, *(str(a) for a in args[1:]))
    raise ValueError(f"unknown fault {entry!r}")


def parse_script(entries: Iterable[Any]) -> list[Fault | None]:
    """Validate a whole script up front so a typo fails when the server is built, not mid-test."""
    return [parse_fault(entry) for entry in entries]


def mixed_script(
    length: int, rate: float, kinds: Sequence[Any], *, seed: int = 0
) -> list[Fault | None]:
    """`length` entries in which each request fails with probability `rate`, with a kind drawn
    uniformly from `kinds` (script entries); the rest are served normally. Seeded, so a test
    replays the same mix."""
    if length < 0:
        raise ValueError("a script length must be >= 0")
    if not 0 <= rate <= 1:
        raise ValueError(f"a fault rate is within 0..1, got {rate}")
    faults = parse_script(kinds)
    if rate > 0 and not faults:
        raise ValueError("a fault rate above 0 needs at least one fault kind")
    rng = random.Random(seed)
    return [rng.choice(faults) if rng.random() < rate else None for _ in range(length)]
