"""Evidence roots: which members hold the true root (the second-key's testimony) and the false
root (the key role's testimony in C1) after each round, and how those states change.

A member holds a root in round Rk if any of its statements up to Rk carries it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

STATES = ("none", "true_only", "false_only", "both")


def state_of(true: bool, false: bool) -> str:
    """none, true_only, false_only or both."""
    return STATES[int(true) + 2 * int(false)]


def holdings(
    carried_by_round: Sequence[Mapping[str, int]], true_root: str, false_root: str | None
) -> list[tuple[str, int | None, int | None]]:
    """Per round (in order): the state, and the order of the latest statement so far carrying
    the true / the false root (None when not held). `carried_by_round[k]` is what the member's
    statement of round k + 1 carries (empty if it said nothing or had no claims)."""
    result = []
    latest: dict[str, int] = {}
    for carried in carried_by_round:
        for root in (true_root, false_root):
            if root is not None and root in carried:
                latest[root] = carried[root]
        t = latest.get(true_root)
        f = latest.get(false_root) if false_root is not None else None
        result.append((state_of(t is not None, f is not None), t, f))
    return result


def transitions(states: Sequence[Sequence[str]]) -> dict[tuple[int, str, str], int]:
    """Counts of (from round index, state there, state in the next round) over members."""
    counts: dict[tuple[int, str, str], int] = {}
    for path in states:
        for k in range(len(path) - 1):
            key = (k, path[k], path[k + 1])
            counts[key] = counts.get(key, 0) + 1
    return counts
