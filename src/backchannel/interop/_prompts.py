"""The one place the interop formats read what each model call was sent.

Every format that shows a call's input (the Inspect log's model events) reads it through
`call_prompts`, so a change in how the store keeps prompts is followed here alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

Prompt = list[tuple[str, str]]
"""The messages of a call's last attempt, `(role, content)`, exactly as the model got them."""


def call_prompts(tables: RunTables) -> dict[tuple[str, int], Prompt]:
    """The prompt of every event that was a model call, by `(conversation_id, seq)`.

    Events that were not model calls (a moderator's opening message) have none. Today the
    prompt is the `prompt` entry of each event's `meta` (docs/data-schema.md).
    """
    from backchannel.analysis import decode_json

    events = tables.events
    found: dict[tuple[str, int], Prompt] = {}
    for conversation, seq, meta in zip(
        events["conversation_id"], events["seq"], events["meta"], strict=True
    ):
        decoded = decode_json(meta)
        prompt = decoded.get("prompt") if isinstance(decoded, dict) else None
        if prompt:
            found[(str(conversation), int(seq))] = [(str(r), str(c)) for r, c in prompt]
    return found
