"""The protocol's one door to the engine's room: votes, testimony and simultaneous statements.

Everything that depends on how the room numbers rounds, shows direct messages or runs a subset
of its agents lives here, so a change of the engine's API is a change of this module only.

- Rounds: T0 = 0, T1 = 1, Rk = 2k, Ok = 2k + 1 (see `_phases`). The room numbers its rounds, so
  the stage lets a round pass unspoken where a phase has no speakers (Ok without active
  observers) and checks that every vote and statement lands on its phase's number.
- Direct messages: the room's `direct` channel (`to=`), so only sender and recipient see them.
- Subsets: one room holds every agent (story roles and observers); each phase's speakers run a
  simultaneous round of their own (`run_round(agents=...)`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from backchannel.backends import GenerationSettings, OutputConstraint
from backchannel.engine import Agent, ConversationContext, Event, OffTheRecord, Shown
from backchannel.paradigms.testimony._environment import WitnessMessage
from backchannel.paradigms.testimony._phases import round_of

TESTIMONY = "testimony"


class Stage:
    """One conversation's record: every agent's view of it, and the calls that add to it."""

    def __init__(self, ctx: ConversationContext, agents: Sequence[Agent], preamble: str) -> None:
        self.ctx = ctx
        self.room = ctx.room(agents, memory_rounds=None, order="fixed", preamble=preamble)

    def _advance_to(self, number: int) -> None:
        """Let rounds pass unspoken until `number` is the round in progress."""
        while self.room.round < number:
            self.room.next_round()
        if self.room.round != number:
            raise RuntimeError(f"round {number} is over (the room is at {self.room.round})")

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
        self._advance_to(round_of(checkpoint))
        return self.room.checkpoint(
            question,
            agents=agents,
            name=name,
            constraint=constraint,
            settings=settings,
            meta={"checkpoint": checkpoint},
        )

    def post(
        self, message: WitnessMessage, *, role: str, shown: str, meta: dict[str, object]
    ) -> Event:
        """One scripted message (no model call), stored and shown to exactly its audience."""
        self._advance_to(round_of("T1"))
        sender = self.room.agent(message.sender)
        if sender.role != role:
            raise RuntimeError(f"{message.sender} sends as {role!r} but sits as {sender.role!r}")
        direct = message.kind != "broadcast"
        extra = {**meta, "kind": message.kind, "recipients": list(message.recipients)}
        return self.room.post(
            sender,
            message.text,
            to=list(message.recipients) if direct else None,
            name=TESTIMONY,
            meta=extra,
            shown=shown,
        )

    async def statements(
        self,
        agents: Sequence[Agent],
        phase: str,
        instruction: str,
        *,
        name: str,
        shown: Shown,
        off_the_record: OffTheRecord | None = None,
    ) -> list[Event]:
        """One public statement from each agent, all from the view before the round (each
        followed by its off-the-record probe, when given)."""
        number = round_of(phase)
        self._advance_to(number - 1)
        return await self.room.run_round(
            instruction,
            agents=agents,
            simultaneous=True,
            name=name,
            shown=shown,
            off_the_record=off_the_record,
        )
