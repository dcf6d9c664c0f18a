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

    Events that were not model calls (a moderator's opening message) have none. The prompts are
    the run's `prompts` table (docs/data-schema.md); tables exported before it existed kept each
    prompt as the `prompt` entry of its event's `meta`, read when the table is empty.
    """
    from backchannel.analysis import decode_json

    found: dict[tuple[str, int], Prompt] = {}
    prompts = tables.prompts
    for conversation, seq, text in zip(
        prompts["conversation_id"], prompts["seq"], prompts["prompt"], strict=True
    ):
        decoded = decode_json(text)
        if decoded:
            found[(str(conversation), int(seq))] = [(str(r), str(c)) for r, c in decoded]
    if found:
        return found
    events = tables.events
    for conversation, seq, meta in zip(
        events["conversation_id"], events["seq"], events["meta"], strict=True
    ):
        decoded = decode_json(meta)
        prompt = decoded.get("prompt") if isinstance(decoded, dict) else None
        if prompt:
            found[(str(conversation), int(seq))] = [(str(r), str(c)) for r, c in prompt]
    return found
