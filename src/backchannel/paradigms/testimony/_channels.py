"""How testimony and subsets of speakers enter a room: the one place that touches visibility.

A direct message is stored as a public-channel message whose `meta.audience` names its
recipient, and enters the transcript with that audience, so only the sender and the recipient
ever see it (the room's own rule for `audience=`). Observers speak in a second room that shares
the first room's transcript, so that a round can be simultaneous for a subset of the agents.
"""

from __future__ import annotations

from collections.abc import Sequence

from backchannel.engine import Agent, ConversationContext, Entry, Event, Room
from backchannel.paradigms.testimony._environment import WitnessMessage

TESTIMONY_ROUND = 1


def post_testimony(
    ctx: ConversationContext,
    room: Room,
    message: WitnessMessage,
    *,
    role: str,
    turn: int,
    shown: str,
    meta: dict[str, object],
) -> Event:
    """Store one scripted message (no model call) and show it to exactly its audience."""
    audience = None if message.kind == "broadcast" else frozenset(message.recipients)
    extra = dict(meta)
    extra["kind"] = message.kind
    extra["recipients"] = list(message.recipients)
    if audience is not None:
        extra["audience"] = sorted(audience)
    event = ctx.record(
        kind="message",
        name="testimony",
        round=TESTIMONY_ROUND,
        turn=turn,
        agent=message.sender,
        role=role,
        channel="public",
        text=message.text,
        meta=extra,
    )
    room.transcript.append(Entry(TESTIMONY_ROUND, turn, message.sender, shown, audience))
    return event


def side_room(ctx: ConversationContext, agents: Sequence[Agent], main: Room) -> Room:
    """A room of `agents` that reads and writes `main`'s transcript (same record, own rounds)."""
    room = ctx.room(agents, memory_rounds=main.memory_rounds, order="fixed", preamble=main.preamble)
    room.transcript = main.transcript
    return room
