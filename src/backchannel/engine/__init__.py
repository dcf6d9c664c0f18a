"""The engine: agents, rooms, rounds, memory views, private probes, events and the scheduler."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.engine._agent import Agent
    from backchannel.engine._columns import (
        CONVERSATION_TABLE,
        EVENT_TABLE,
        LABEL_TABLE,
        PROMPT_TABLE,
        Column,
        column_names,
    )
    from backchannel.engine._conversation import (
        ConversationContext,
        ConversationSpec,
        Item,
        Label,
        Payload,
    )
    from backchannel.engine._events import (
        CHANNELS,
        RECIPIENTS,
        Channel,
        Event,
        EventLog,
        Postprocess,
    )
    from backchannel.engine._memory import MODERATOR, Entry, render_view, visible_entries
    from backchannel.engine._order import OrderPolicy, speaking_order
    from backchannel.engine._room import (
        OFF_THE_RECORD,
        PROBE_SETTINGS,
        TURN_SEQ,
        OffTheRecord,
        Room,
        Shown,
    )
    from backchannel.engine._roster import MAX_AGENTS, load_roster, shipped_roster
    from backchannel.engine._scheduler import (
        ConversationOutcome,
        active_conversations,
        run_conversation,
        schedule,
    )
    from backchannel.engine._topology import (
        PLACEMENTS,
        TOPOLOGIES,
        TopologySpec,
        build_graph,
        distances,
        graph_meta,
        hears,
        place_adversaries,
    )

__all__ = [
    "CHANNELS",
    "CONVERSATION_TABLE",
    "EVENT_TABLE",
    "LABEL_TABLE",
    "MAX_AGENTS",
    "MODERATOR",
    "OFF_THE_RECORD",
    "PLACEMENTS",
    "PROBE_SETTINGS",
    "PROMPT_TABLE",
    "RECIPIENTS",
    "TOPOLOGIES",
    "TURN_SEQ",
    "Agent",
    "Channel",
    "Column",
    "ConversationContext",
    "ConversationOutcome",
    "ConversationSpec",
    "Entry",
    "Event",
    "EventLog",
    "Item",
    "Label",
    "OffTheRecord",
    "OrderPolicy",
    "Payload",
    "Postprocess",
    "Room",
    "Shown",
    "TopologySpec",
    "active_conversations",
    "build_graph",
    "column_names",
    "distances",
    "graph_meta",
    "hears",
    "load_roster",
    "place_adversaries",
    "render_view",
    "run_conversation",
    "schedule",
    "shipped_roster",
    "speaking_order",
    "visible_entries",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._agent": ("Agent",),
            "._columns": (
                "CONVERSATION_TABLE",
                "EVENT_TABLE",
                "LABEL_TABLE",
                "PROMPT_TABLE",
                "Column",
                "column_names",
            ),
            "._conversation": (
                "ConversationContext",
                "ConversationSpec",
                "Item",
                "Label",
                "Payload",
            ),
            "._events": ("CHANNELS", "RECIPIENTS", "Channel", "Event", "EventLog", "Postprocess"),
            "._memory": ("MODERATOR", "Entry", "render_view", "visible_entries"),
            "._order": ("OrderPolicy", "speaking_order"),
            "._room": (
                "OFF_THE_RECORD",
                "PROBE_SETTINGS",
                "TURN_SEQ",
                "OffTheRecord",
                "Room",
                "Shown",
            ),
            "._roster": ("MAX_AGENTS", "load_roster", "shipped_roster"),
            "._scheduler": (
                "ConversationOutcome",
                "active_conversations",
                "run_conversation",
                "schedule",
            ),
            "._topology": (
                "PLACEMENTS",
                "TOPOLOGIES",
                "TopologySpec",
                "build_graph",
                "distances",
                "graph_meta",
                "hears",
                "place_adversaries",
            ),
        },
    )
