"""Observation windows: which part of the chain each role saw, by a fixed, documented rule.

A window is a (role, contiguous sub-chain) pair, given as node indices [start, end]: the role
entered while the object was in node `start`, saw every move made while it was present and left
while the object was in node `end`. A role that left and came back has two windows.

The rule (see docs/paradigms/testimony.md): with p = floor(m/3 + 1/2) and q = floor(2m/3 + 1/2),
the spans are early [0, p], middle [p, q], mover [q, m], witness [m-1, m] and relay [m-2, m-1].
The actor of the final move takes the mover span; the other four roles take the other four spans
in the first order (permutations of the roster, in lexicographic order) that the verifier
accepts. Every role also observes each move it made, and windows that touch are merged. An
adapted assignment may give a role one more window (`extra`), such as a moment at which it saw
where the object was without seeing it move.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from backchannel.paradigms.testimony._chain import Chain

SLOTS = ("early", "middle", "mover", "witness", "relay")


@dataclass(frozen=True, slots=True, order=True)
class Window:
    """Nodes start..end (inclusive) seen by one role; it saw the moves start+1..end."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"a window needs 0 <= start <= end, got [{self.start}, {self.end}]")

    @property
    def moves(self) -> range:
        return range(self.start + 1, self.end + 1)


Windows = Mapping[str, tuple[Window, ...]]


def spans(moves: int) -> dict[str, Window]:
    """The five spans of the rule for a chain of `moves` moves (m >= 3)."""
    if moves < 3:
        raise ValueError(f"the window rule needs at least 3 moves, got {moves}")
    p = max(1, int(moves / 3 + 0.5))
    q = min(moves - 1, max(p + 1, int(2 * moves / 3 + 0.5)))
    return {
        "early": Window(0, p),
        "middle": Window(p, q),
        "mover": Window(q, moves),
        "witness": Window(moves - 1, moves),
        "relay": Window(moves - 2, moves - 1),
    }


def merge(windows: Iterable[Window]) -> tuple[Window, ...]:
    """Windows of one role, sorted; windows that overlap or share a node become one."""
    merged: list[Window] = []
    for window in sorted(windows):
        if merged and window.start <= merged[-1].end:
            last = merged.pop()
            window = Window(last.start, max(last.end, window.end))
        merged.append(window)
    return tuple(merged)


def windows_for(
    chain: Chain,
    slots: Mapping[str, str],
    extra: Mapping[str, Iterable[Window]] | None = None,
) -> dict[str, tuple[Window, ...]]:
    """The windows of every role, given which role takes which slot (`slots`: slot -> role),
    plus any `extra` windows per role."""
    span = spans(chain.moves)
    own: dict[str, list[Window]] = {role: [] for role in chain.roles}
    for slot, role in slots.items():
        own[role].append(span[slot])
    for role, added in (extra or {}).items():
        own[role].extend(added)
    for move in range(1, chain.moves + 1):
        own[chain.actor(move)].append(Window(move - 1, move))
    return {role: merge(found) for role, found in own.items()}


def observed_moves(windows: Iterable[Window]) -> set[int]:
    return {move for window in windows for move in window.moves}


def observed_nodes(windows: Iterable[Window]) -> set[int]:
    return {node for window in windows for node in range(window.start, window.end + 1)}
