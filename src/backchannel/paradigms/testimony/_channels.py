"""The protocol's one door to the engine's room: votes, testimony and simultaneous statements.

Everything that depends on how the room numbers rounds, shows direct messages or runs a subset
of its agents lives here, so a change of the engine's API is a change of this module only.

- Rounds: T0 = 0, T1 = 1, Rk = 2k, Ok = 2k + 1 (see `_phases`), passed to the room explicitly.
- Direct messages: stored as public-channel messages whose `meta.audience` names the recipient,
  and entered into the transcript with that audience, so only sender and recipient see them
  (the room's rule for `audience=`).
- Subsets: a round is simultaneous for the agents of one room, so each set of speakers gets a
  room of its own that shares the first room's transcript (one record, several speaker sets).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from backchannel.backends import GenerationSettings, OutputConstraint
from backchannel.engine import Agent, ConversationContext, Entry, Event, Room, Shown
from backchannel.paradigms.testimony._environment import WitnessMessage
from backchannel.paradigms.testimony._phases import round_of

TESTIMONY = "testimony"


class Stage:
    """One conversation's record: every agent's view of it, and the calls that add to it."""

    def __init__(self, ctx: ConversationContext, agents: Sequence[Agent], preamble: str) -> None:
        self.ctx = ctx
        self.room = ctx.room(agents, memory_rounds=None, order="fixed", preamble=preamble)
        self._rooms: dict[tuple[str, ...], Room] = {tuple(a.name for a in agents): self.room}
        self._turn = 0

    def _room_of(self, agents: Sequence[Agent]) -> Room:
        names = tuple(a.name for a in agents)
        room = self._rooms.get(names)
        if room is None:
            room = self.ctx.room(
                agents, memory_rounds=None, order="fixed", preamble=self.room.preamble
            )
            room.transcript = self.room.transcript  # the same record, other speakers
            self._rooms[names] = room
        return room

    def vote(
        self,
        agents: Sequence[Agent],
        checkpoint: str,
        question: str,
        *,
        name: str,
        constraint: OutputConstraint,
        settings: GenerationSettings,
    ) -> list[asyncio.Task[Event]]:
        """Ask each agent privately, from its view now; stored at the checkpoint's number."""
        return [
            self.room.probe(
                agent,
                question,
                checkpoint=round_of(checkpoint),
                name=name,
                constraint=constraint,
                settings=settings,
                meta={"checkpoint": checkpoint},
            )
            for agent in agents
        ]

    def post(
        self, message: WitnessMessage, *, role: str, shown: str, meta: dict[str, object]
    ) -> Event:
        """One scripted message (no model call), stored and shown to exactly its audience."""
        number = round_of("T1")
        audience = None if message.kind == "broadcast" else frozenset(message.recipients)
        extra = {**meta, "kind": message.kind, "recipients": list(message.recipients)}
        if audience is not None:
            extra["audience"] = sorted(audience)
        event = self.ctx.record(
            kind="message",
            name=TESTIMONY,
            round=number,
            turn=self._turn,
            agent=message.sender,
            role=role,
            channel="public",
            text=message.text,
            meta=extra,
        )
        self.room.transcript.append(Entry(number, self._turn, message.sender, shown, audience))
        self._turn += 1
        return event

    async def statements(
        self, agents: Sequence[Agent], phase: str, instruction: str, *, name: str, shown: Shown
    ) -> list[Event]:
        """One public statement from each agent, all from the view before the round."""
        return await self._room_of(agents).run_round(
            round_of(phase), instruction, simultaneous=True, name=name, shown=shown
        )
