"""A conversation as a self-contained task: (spec, seed, model client) -> events.

Nothing here reaches for global state or the run store, which lets a scheduler run many at once
(and, later, hand them to workers on other machines).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from backchannel.backends import (
    CallInfo,
    Completion,
    GenerationSettings,
    LLMClient,
    Message,
    OutputConstraint,
    Request,
    Seen,
    UsageMeter,
)
from backchannel.engine._events import Channel, Event, EventLog, Postprocess
from backchannel.engine._room import Room
from backchannel.seeding import derive_seed

Payload = Mapping[str, Any]
"""An item's fields by name, each a JSON value (text, number, bool, null, list, mapping): the
question, statement or scenario a paradigm's `items()` builds and its `run()` reads back from
`ctx.spec.item.payload`. Read it, never change it: every conversation of the item shares it."""

if TYPE_CHECKING:
    from backchannel.engine._agent import Agent
    from backchannel.engine._order import OrderPolicy


@dataclass(frozen=True, slots=True)
class Item:
    """One question, story, topic or scenario: an id and its payload (`Payload`), which the
    store keeps as the conversation's `meta["item"]` and a simulated population reads as
    `CallInfo.item`."""

    item_id: str
    payload: Payload = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.item_id or "/" in self.item_id:
            raise ValueError(f"item id {self.item_id!r} must be non-empty and contain no '/'")
        if not isinstance(self.payload, Mapping):
            raise TypeError(
                f"item {self.item_id}: the payload must be a mapping of field names to JSON "
                f"values, not {type(self.payload).__name__}"
            )
        keys = [k for k in self.payload if not isinstance(k, str)]
        if keys:
            raise TypeError(f"item {self.item_id}: payload keys must be text, not {keys[0]!r}")
        # a plain dict, whatever mapping was given: what the store writes as JSON
        object.__setattr__(self, "payload", dict(self.payload))


@dataclass(frozen=True, slots=True)
class Label:
    """A judge's label of one event of this conversation (stored in the labels table)."""

    event_seq: int
    judge: str
    label: str | None
    status: str
    text: str
    model: str


@dataclass(frozen=True, slots=True)
class ConversationSpec:
    """One cell x item x replicate, with its own seed.

    `call_seed`, when set, is shared by the paired arms of one item and replicate (cells that
    differ only in a paradigm's paired factors): each call's seed then derives from it and the
    call's place (agent, kind, name, round and how many such calls came before), not from the
    conversation's seed and the event's sequence number, so a call the arms make alike has the
    same seed, and is made once.
    """

    conversation_id: str
    paradigm: str
    cell: dict[str, Any]
    cell_key: str
    item: Item
    replicate: int
    seed: int
    call_seed: int | None = None


S = TypeVar("S")
"""A paradigm's Settings type: `ctx.settings` is the cell's resolved settings."""


class ConversationContext(Generic[S]):
    """What a paradigm's `run` gets: its spec and the cell's resolved settings, a seeded RNG,
    rooms and model calls."""

    def __init__(
        self,
        spec: ConversationSpec,
        settings: S,
        client: LLMClient,
        *,
        experiment_seed: int,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.client = client
        self.experiment_seed = experiment_seed
        self.rng = random.Random(spec.seed)
        self.log = EventLog()
        self.usage = UsageMeter()
        self.meta: dict[str, Any] = {}
        self.labels: list[Label] = []
        self._background: list[asyncio.Task[Any]] = []
        self._places: dict[tuple[str, str, str, int], int] = {}

    def room(
        self,
        agents: Sequence[Agent],
        *,
        memory_rounds: int | None = None,
        order: OrderPolicy = "fixed",
        opening: str | None = None,
        preamble: str = "",
        hears: Mapping[str, frozenset[str]] | None = None,
    ) -> Room:
        return Room(
            self,
            agents,
            memory_rounds=memory_rounds,
            order=order,
            opening=opening,
            preamble=preamble,
            hears=hears,
        )

    def request(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        seq: int,
        settings: GenerationSettings,
        constraint: OutputConstraint | None = None,
        critical: bool = True,
        call: CallInfo | None = None,
        place: tuple[str, str, str, int] | None = None,
    ) -> Request:
        """A call's request. Its seed derives from the conversation's seed and `seq`, or, for
        paired arms (`spec.call_seed`), from the pair's seed and the call's `place`."""
        return Request(
            model=model,
            messages=tuple(messages),
            settings=settings,
            constraint=constraint,
            seed=self.call_seed(seq, place),
            replicate=self.spec.replicate,
            critical=critical,
            call=call,
        )

    def call_info(
        self,
        name: str,
        *,
        agent: str,
        role: str,
        round: int,
        facts: Mapping[str, Any] | None = None,
        seen: tuple[Seen, ...] = (),
    ) -> CallInfo:
        """What a call of this conversation is (its prompt's name, who asks, the item and the
        caller's facts), for a simulated population; no real model sees it."""
        spec = self.spec
        return CallInfo(
            prompt=name,
            paradigm=spec.paradigm,
            agent=agent,
            role=role,
            round=round,
            item_id=spec.item.item_id,
            item=spec.item.payload,
            facts=facts or {},
            seen=seen,
        )

    def call_seed(self, seq: int, place: tuple[str, str, str, int] | None) -> int:
        """The seed of the call at event `seq` and `place` (agent, kind, name, round)."""
        if self.spec.call_seed is None or place is None:
            return derive_seed(self.spec.seed, seq)
        before = self._places.get(place, 0)
        self._places[place] = before + 1
        return derive_seed(self.spec.call_seed, *place, before)

    async def generate(self, request: Request) -> Completion:
        return await self.client.generate(request, self.usage)

    def prepare(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        name: str,
        round: int,
        turn: int | None,
        agent: str,
        role: str,
        channel: Channel,
        settings: GenerationSettings,
        constraint: OutputConstraint | None,
        critical: bool,
        meta: dict[str, Any] | None,
        facts: Mapping[str, Any] | None = None,
        seen: tuple[Seen, ...] = (),
    ) -> tuple[Event, Request]:
        """Reserve the event of a model call now (its place in the order) and build its request,
        with its call information (`call_info`: the event's name, `facts`, `seen`)."""
        event = self.log.reserve(
            kind=kind,
            name=name,
            round=round,
            turn=turn,
            agent=agent,
            role=role,
            channel=channel,
            meta=meta,
        )
        request = self.request(
            model,
            messages,
            seq=event.seq,
            settings=settings,
            constraint=constraint,
            critical=critical,
            call=self.call_info(name, agent=agent, role=role, round=round, facts=facts, seen=seen),
            place=(agent, kind, name, round),
        )
        return event, request

    async def ask(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        name: str,
        round: int,
        agent: str,
        role: str,
        channel: Channel = "private",
        settings: GenerationSettings | None = None,
        constraint: OutputConstraint | None = None,
        critical: bool = False,
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
        seed: int | None = None,
        facts: Mapping[str, Any] | None = None,
    ) -> Event:
        """One independent call (no room, so no turn), stored as an event of the given kind.

        `postprocess(event)` returns the event reshaped (value, meta) before it is stored;
        `seed` replaces the per-call seed and drops the replicate from the cache key, for calls
        shared by many conversations (a run-level seed: asked once, then answered from the cache).
        `facts` go into the call information only (for a simulated population, see `call_info`).
        """
        event, request = self.prepare(
            model,
            messages,
            kind=kind,
            name=name,
            round=round,
            turn=None,
            agent=agent,
            role=role,
            channel=channel,
            settings=settings or GenerationSettings(),
            constraint=constraint,
            critical=critical,
            meta=meta,
            facts=facts,
        )
        if seed is not None:
            # A call shared by many conversations: same seed, and no replicate in its cache key.
            request = replace(request, seed=seed, replicate=0)
        return self.finish(event, await self.generate(request), postprocess)

    def finish(
        self, event: Event, completion: Completion, postprocess: Postprocess | None = None
    ) -> Event:
        """Fill a reserved event with its answer, let `postprocess` reshape it, store it.

        Returns the stored event: the reserved one is never changed in place.
        """
        filled = event.fill(completion)
        if postprocess is not None:
            filled = postprocess(filled)
        return self.log.complete(filled)

    def record(
        self,
        *,
        kind: str,
        name: str,
        round: int,
        agent: str,
        role: str,
        channel: Channel,
        value: Any = None,
        text: str = "",
        meta: dict[str, Any] | None = None,
    ) -> Event:
        """Store an event that no model produced (a computed value, a scripted message)."""
        event = self.log.reserve(
            kind=kind,
            name=name,
            round=round,
            turn=None,
            agent=agent,
            role=role,
            channel=channel,
            meta=meta,
        )
        return self.log.complete(replace(event, text=text, value=value))

    def label(
        self,
        event: Event,
        judge: str,
        label: str | None,
        *,
        status: str = "ok",
        text: str = "",
        model: str = "rule",
    ) -> Label:
        """Attach an inline judge's label to an event; stored with the conversation."""
        row = Label(event.seq, judge, label, status, text, model)
        self.labels.append(row)
        return row

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run off the critical path; `drain` waits for it before the conversation is stored."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.append(task)
        return task

    async def drain(self) -> None:
        """Wait for all background work, including work spawned while waiting.

        Tasks stay listed until the end, so that after a failure `cancel_background` can still
        cancel the ones left running.
        """
        index = 0
        while index < len(self._background):
            await self._background[index]
            index += 1
        self._background.clear()

    async def cancel_background(self) -> None:
        """Stop background work of a conversation that will not be stored."""
        for task in self._background:
            if not task.done():
                task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
