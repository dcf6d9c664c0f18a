"""The divergence section's typed results: per cell, round and role, and tests between cells
(computed by analysis/_divergence.py; definitions in docs/divergence.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from backchannel.analysis._records import CellRow, IntervalRecord, Record


class DivergenceRow(CellRow):
    """One cell, round and role: its classified pairs, why others were skipped, and each share
    with a 95 % interval clustered by conversation (docs/divergence.md)."""

    keys: ClassVar[tuple[str, ...]] = ("round", "role")
    round: int
    role: str
    pairs: int
    n: int
    conversations: int
    skipped: dict[str, int]
    counts: dict[str, int]
    agree: IntervalRecord
    hidden_change: IntervalRecord
    public_accommodation: IntervalRecord
    both_moved: IntervalRecord
    divergent: IntervalRecord


class DivergenceTest(Record):
    """One share compared between two cells that differ in one factor, for one role, over
    rounds: the unit is a conversation's share among its classified pairs."""

    role: str
    measure: str
    factor: str
    first: dict[str, Any]
    second: dict[str, Any]
    paired: bool
    test: str
    method: str | None = None
    statistic: float | None
    p_value: float | None
    p_holm: float | None
    difference: float | None
    """Mean share of `second` minus that of `first`, over the units the test used."""
    n: int
    missing: int
    skipped: str | None


class Divergence(Record):
    """The divergence section of a run's metrics (the `divergence` field of `Metrics`)."""

    interval: str
    by_cell: list[DivergenceRow]
    tests: list[DivergenceTest]
