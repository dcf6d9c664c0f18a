"""The default roster: ten names with personas, shared by the group paradigms."""

from __future__ import annotations

NAMES = ("Alice", "Bob", "Carol", "David", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Jack")
PERSONAS = (
    "historian",
    "scientist",
    "journalist",
    "teacher",
    "analyst",
    "librarian",
    "researcher",
    "engineer",
    "philosopher",
    "student",
)


def roster(size: int) -> list[tuple[str, str]]:
    """The first `size` (name, persona) pairs."""
    if not 1 <= size <= len(NAMES):
        raise ValueError(f"a roster has 1 to {len(NAMES)} agents, not {size}")
    return list(zip(NAMES[:size], PERSONAS[:size], strict=True))
