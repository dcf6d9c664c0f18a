"""Seeded draws of the simulated population, and the system text that keys lasting traits."""

from __future__ import annotations

import hashlib

from backchannel.backends._sim import request_digest
from backchannel.backends._types import Request


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
