"""How one private vote reads against a story: the true endpoint, the decoy, UNKNOWN, another
container, or no readable vote at all."""

from __future__ import annotations

VOTE_KINDS = ("true", "decoy", "unknown", "other", "failed")


def vote_kind(value: object, endpoint: str, decoy: str) -> str:
    """true, decoy, unknown, other, or failed (no readable vote)."""
    if not isinstance(value, str):
        return "failed"
    if value == endpoint:
        return "true"
    if value == decoy:
        return "decoy"
    if value == "UNKNOWN":
        return "unknown"
    return "other"
