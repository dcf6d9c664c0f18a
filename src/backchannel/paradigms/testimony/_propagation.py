"""Propagation order: how many hands a testimony passed through to reach a statement.

A claim citing the testimony itself carries it at order 1; a claim citing a statement that
carries it at order k carries it at k + 1; a statement's order for a testimony is the maximum
over its claims. Valid citations point to earlier rounds only, so the graph has no cycles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from backchannel.paradigms.testimony._citations import Claim

Key = tuple[str, str]  # (agent, round label)


def direct(claims: Sequence[Claim], sender: str) -> int:
    """Claims that cite `sender`'s testimony itself."""
    return sum(c.kind == "testimony" and c.source == sender for c in claims)


def carries(claim: Claim, sender: str, carried: Mapping[Key, Mapping[str, int]]) -> bool:
    """Whether a claim carries `sender`'s testimony: it cites it, or cites a statement that
    carries it (a chain of statement citations rooted in it)."""
    if claim.kind == "testimony":
        return claim.source == sender
    return sender in carried.get((claim.source, claim.round or ""), {})


def adopting(
    claims: Sequence[Claim],
    sender: str,
    endpoint: str | None,
    carried: Mapping[Key, Mapping[str, int]],
) -> int:
    """Claims that adopt `sender`'s testimony: they carry it and support its endpoint (the
    study's adoption; an endpoint of None is adopted by no claim)."""
    if endpoint is None:
        return 0
    return sum(carries(c, sender, carried) and c.supports == endpoint for c in claims)


def through_carrier(
    claims: Sequence[Claim], sender: str, carried: Mapping[Key, Mapping[str, int]]
) -> int:
    """Claims that carry `sender`'s testimony through an earlier statement."""
    return sum(
        c.kind == "statement" and sender in carried.get((c.source, c.round or ""), {})
        for c in claims
    )


def slot_orders(
    numbers: np.ndarray,
    slots: np.ndarray,
    claim_statement: np.ndarray,
    direct: np.ndarray,
    cited: np.ndarray,
    n_slots: int,
) -> np.ndarray:
    """The order at which each statement carries one testimony, for many statements at once,
    a round at a time (the definition above; a per-statement reference is in the tests).

    Statements (with an extraction) are given by their round `numbers` and key `slots` (one
    slot per distinct (conversation, agent, round label)); claims by their statement's index,
    whether they cite the testimony itself (`direct`) and the slot of the statement they cite
    (`cited`, -1: none). Returns the order each slot carries the testimony at (0: not carried);
    of two statements with one slot, the later one's. Claims must cite earlier rounds only.
    """
    carried = np.zeros(n_slots + 1, dtype=np.int64)  # the last one: no slot (cited -1)
    by_round = np.argsort(numbers[claim_statement], kind="stable")
    claim_numbers = numbers[claim_statement][by_round]
    for number in np.unique(numbers):
        mine = np.flatnonzero(numbers == number)
        lo, hi = np.searchsorted(claim_numbers, [number, number + 1])
        claims = by_round[lo:hi]
        through = carried[cited[claims]]
        order = np.where(direct[claims], 1, np.where(through > 0, through + 1, 0))
        best = np.zeros(len(numbers), dtype=np.int64)
        np.maximum.at(best, claim_statement[claims], order)
        # The last statement of a slot wins: keep each slot's last occurrence only.
        last = len(mine) - 1 - np.unique(slots[mine][::-1], return_index=True)[1]
        carried[slots[mine][last]] = best[mine][last]
    return carried[:-1]
