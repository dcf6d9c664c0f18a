"""Events: every stored record of a conversation, with a sequence number fixed when it starts.

Sequence numbers are reserved in the conversation's own control flow (not when a call finishes),
so concurrent probes still get the same numbers on every run and a resumed run exports the same
events as an uninterrupted one. An event is immutable: filling it with a model's answer, or
reshaping it afterwards, makes a new event that takes the reserved one's place in the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, get_args

from backchannel.backends import Completion

Channel = Literal["public", "direct", "private"]
"""`public` enters the room; `direct` reaches only its recipients (and its sender); `private`
(a probe and its answer) never enters any agent's context."""
CHANNELS: tuple[str, ...] = get_args(Channel)
RECIPIENTS = "recipients"
"""The meta key of a direct event: the sorted names of the agents it was sent to."""


@dataclass(frozen=True, slots=True)
class Event:
    """One stored record: message, probe answer, rating, ranking, score or vote.

    Frozen, and `meta` is a read-only mapping: derive a changed event with
    `dataclasses.replace(event, value=..., meta={**event.meta, ...})`.
    """

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
    meta: Mapping[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    reasoning_tokens: int = 0

    def __post_init__(self) -> None:
        if self.channel not in CHANNELS:
            raise ValueError(f"channel {self.channel!r} is not one of {', '.join(CHANNELS)}")
        if self.channel == "direct" and not self.meta.get(RECIPIENTS):
            raise ValueError(f"a direct event needs its recipients in meta[{RECIPIENTS!r}]")
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    def __getstate__(self) -> dict[str, Any]:
        # The read-only mapping cannot be pickled; a plain dict stands in for it.
        state = {name: getattr(self, name) for name in self.__dataclass_fields__}
        state["meta"] = dict(self.meta)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "meta", MappingProxyType(dict(state["meta"])))

    def fill(self, completion: Completion) -> Event:
        """This event with a model's answer: text, parsed value, status, usage, reasoning, and
        in meta the error, re-ask attempts, prompt and transport retries of the call."""
        meta = dict(self.meta)
        if completion.error:
            meta["error"] = completion.error
        if completion.attempts > 1:
            meta["attempts"] = completion.attempts
        if completion.prompt:
            meta["prompt"] = [[m.role, m.content] for m in completion.prompt]
        # Always, 0 included, so a reader tells "no retries" from "not recorded".
        meta["retries"] = completion.retries
        if completion.timings:
            # The llama.cpp server's own account: prompt tokens evaluated vs reused, and times.
            meta["timings"] = dict(completion.timings)
        return replace(
            self,
            text=completion.text,
            value=completion.value,
            status=completion.status,
            model=completion.model,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_s=completion.latency_s,
            cached=completion.cached,
            reasoning=completion.reasoning,
            reasoning_tokens=completion.reasoning_tokens,
            meta=meta,
        )


Postprocess = Callable[[Event], Event]
"""Returns a reshaped copy of a freshly filled event (its text, value, meta; e.g. with
`dataclasses.replace`) before it is stored or enters a room."""


class EventLog:
    """The events of one conversation, in reserved order.

    A reserved event is pending until `complete` puts its final version in its place. The log
    refuses a second event with the same (round, turn, agent): a turn is stored once.
    """

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._pending: set[int] = set()
        self._turns: set[tuple[int, int, str]] = set()

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
        meta: Mapping[str, Any] | None = None,
    ) -> Event:
        if turn is not None:
            key = (round, turn, agent)
            if key in self._turns:
                raise RuntimeError(
                    f"round {round}, turn {turn} of {agent} is already in the log; "
                    "let the room number rounds and turns"
                )
            self._turns.add(key)
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

    def complete(self, event: Event) -> Event:
        """Store the final version of a pending event (same seq, round, turn, agent, channel)."""
        if event.seq not in self._pending:
            raise RuntimeError(f"event {event.seq} is not pending; it was completed already")
        reserved = self._events[event.seq]
        placed = (reserved.round, reserved.turn, reserved.agent, reserved.channel)
        if (event.round, event.turn, event.agent, event.channel) != placed:
            raise RuntimeError(
                f"event {event.seq} changed its place (round, turn, agent, channel) after it "
                "was reserved; a postprocess step may change only text, value and meta"
            )
        self._events[event.seq] = event
        self._pending.discard(event.seq)
        return event

    @property
    def events(self) -> list[Event]:
        if self._pending:
            raise RuntimeError(f"events {sorted(self._pending)} were reserved but never completed")
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)
