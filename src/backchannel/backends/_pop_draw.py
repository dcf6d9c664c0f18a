"""Seeded draws of the simulated population, and the prompt reading of rules that match wording."""

from __future__ import annotations

import hashlib
import re

from backchannel.backends._sim import request_digest
from backchannel.backends._types import Request

_ENTRY = re.compile(r"^([^:\n]{1,60}): (.*)$", re.DOTALL)


def uniform(*parts: object) -> float:
    """A uniform number in [0, 1) fixed by `parts` (stable across runs and machines)."""
    text = "\x1f".join(str(p) for p in parts)
    value = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
    return value / 2**64


def call_uniform(request: Request, salt: str) -> float:
    """A uniform number fixed by this call (its prompt, seed and replicate) and `salt`."""
    return uniform(request_digest(request).hex(), salt)


def system_text(request: Request) -> str:
    return "\n\n".join(m.content for m in request.messages if m.role == "system")


def user_text(request: Request) -> str:
    return "\n\n".join(m.content for m in request.messages if m.role == "user")


def transcript(user: str) -> list[tuple[str, str]]:
    """(speaker, text) of each message after `Conversation so far:` in a room prompt; the
    instruction after the last message is left out."""
    _, found, rest = user.partition("Conversation so far:\n\n")
    if not found:
        return []
    blocks = rest.split("\n\n")
    entries: list[tuple[str, str]] = []
    for block in blocks[:-1]:  # the last block is the instruction
        match = _ENTRY.match(block)
        if match and not block.startswith("Category: "):
            entries.append((match.group(1), match.group(2)))
        elif entries:  # a message with a blank line inside
            speaker, text = entries[-1]
            entries[-1] = (speaker, f"{text}\n\n{block}")
    return entries
