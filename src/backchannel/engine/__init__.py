"""The engine: agents, rooms, rounds, memory views, private probes, events and the scheduler."""

from backchannel.engine._agent import Agent
from backchannel.engine._conversation import (
    ConversationContext,
    ConversationSpec,
    Item,
    Label,
    Postprocess,
)
from backchannel.engine._events import CHANNELS, RECIPIENTS, Channel, Event, EventLog
from backchannel.engine._memory import MODERATOR, Entry, render_view, visible_entries
from backchannel.engine._order import OrderPolicy, speaking_order
from backchannel.engine._room import PROBE_SETTINGS, Room, Shown
from backchannel.engine._scheduler import ConversationOutcome, run_conversation, schedule

__all__ = [
    "CHANNELS",
    "MODERATOR",
    "PROBE_SETTINGS",
    "RECIPIENTS",
    "Agent",
    "Channel",
    "ConversationContext",
    "ConversationOutcome",
    "ConversationSpec",
    "Entry",
    "Event",
    "EventLog",
    "Item",
    "Label",
    "OrderPolicy",
    "Postprocess",
    "Room",
    "Shown",
    "render_view",
    "run_conversation",
    "schedule",
    "speaking_order",
    "visible_entries",
]
