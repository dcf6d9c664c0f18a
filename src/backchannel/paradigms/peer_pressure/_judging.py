"""What a judge labels in a peer-pressure run: honest agents' private answers (every probe,
main series and re-asks) and their public turns, each against the conversation's FactItem."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backchannel.analysis import RunTables
from backchannel.datasets import FactItem
from backchannel.judges import FACT_PRIVATE, FACT_PUBLIC, Chooser, Judging, Pick, fact_item

HONEST = "honest"


def _chooser(tables: RunTables) -> Chooser:
    """Honest agents' ok probes (`private`) and ok turns (`public`), against the item."""
    items: dict[str, FactItem] = {}

    def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> Pick | None:
        if event["role"] != HONEST or event["status"] != "ok":
            return None
        public_turn = event["kind"] == "message" and event["name"] == "turn"
        if event["kind"] == "probe":
            task = FACT_PRIVATE
        elif public_turn and event["channel"] == "public":
            task = FACT_PUBLIC
        else:
            return None
        conversation = str(event["conversation_id"])
        if conversation not in items:
            items[conversation] = fact_item(meta.get("item", {}))
        return Pick(task, str(event["text"] or ""), items[conversation])

    return choose


JUDGING = Judging((FACT_PRIVATE, FACT_PUBLIC), _chooser)
