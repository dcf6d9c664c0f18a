"""Events: every stored record of a conversation, with a sequence number fixed when it starts.

Sequence numbers are reserved in the conversation's own control flow (not when a call finishes),
so concurrent probes still get the same numbers on every run and a resumed run exports the same
events as an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from backchannel.backends import Completion

Channel = Literal["public", "private"]


@dataclass(slots=True)
class Event:
    """One stored record: message, probe answer, rating, ranking, score or vote."""

    seq: int
    kind: str
    name: str
    round: int
    turn: int | None
    agent: str
    role: str
    channel: Channel
    text: str = ""
    value: Any = None
    status: str = "ok"
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    reasoning_tokens: int = 0

    def fill(self, completion: Completion) -> None:
        self.text = completion.text
        self.value = completion.value
        self.status = completion.status
        self.model = completion.model
        self.prompt_tokens = completion.prompt_tokens
        self.completion_tokens = completion.completion_tokens
        self.latency_s = completion.latency_s
        self.cached = completion.cached
        self.reasoning = completion.reasoning
        self.reasoning_tokens = completion.reasoning_tokens
        if completion.error:
            self.meta["error"] = completion.error
        if completion.attempts > 1:
            self.meta["attempts"] = completion.attempts


class EventLog:
    """The events of one conversation, in reserved order."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._pending: set[int] = set()

    def reserve(
        self,
        *,
        kind: str,
        name: str,
        round: int,
        turn: int | None,
        agent: str,
        role: str,
        channel: Channel,
        meta: dict[str, Any] | None = None,
    ) -> Event:
        event = Event(
            seq=len(self._events),
            kind=kind,
            name=name,
            round=round,
            turn=turn,
            agent=agent,
            role=role,
            channel=channel,
            meta=dict(meta or {}),
        )
        self._events.append(event)
        self._pending.add(event.seq)
        return event

    def complete(self, event: Event) -> None:
        self._pending.discard(event.seq)

    @property
    def events(self) -> list[Event]:
        if self._pending:
            raise RuntimeError(f"events {sorted(self._pending)} were reserved but never completed")
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)
