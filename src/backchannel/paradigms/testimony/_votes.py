"""How one private vote reads against a story: the true endpoint, the decoy, UNKNOWN, another
container, cut off by the token budget (truncated), or no readable vote at all (failed)."""

from __future__ import annotations

VOTE_KINDS = ("true", "decoy", "unknown", "other", "truncated", "failed")
ABSENT = ("truncated", "failed")
"""Kinds that are no answer: they never count towards a majority."""


def vote_kind(value: object, endpoint: str, decoy: str, status: str = "ok") -> str:
    """true, decoy, unknown, other, truncated (the answer hit the vote's token budget) or
    failed (no readable vote: a parse failure, a refusal, an error, or no vote at all)."""
    if status == "truncated":
        return "truncated"
    if not isinstance(value, str):
        return "failed"
    if value == endpoint:
        return "true"
    if value == decoy:
        return "decoy"
    if value == "UNKNOWN":
        return "unknown"
    return "other"
