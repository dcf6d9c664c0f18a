"""Explicit seeds derived by stable hashing; nothing uses the global `random` state."""

from __future__ import annotations

import hashlib
import json
from typing import Any

_SEED_MASK = (1 << 31) - 1


def derive_seed(*parts: Any) -> int:
    """A seed in [0, 2^31) from any JSON-able parts; the same parts always give the same seed."""
    payload = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(payload.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _SEED_MASK
