"""The run's cells beyond the study's arms: every factor the run declares other than `model`,
`condition` and `intervention` (which every row carries as its arm) splits every table.

So a run that varies `temperature` or `key_model` as a factor gets one row per level wherever
it gets one per arm, never a pooled one. The cells and their order are the shared
`analysis.cell_groups` (a missing level is a cell of its own, never dropped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, cell_groups

ARM_KEYS = ("model", "condition", "intervention")

Cell = dict[str, Any]


@dataclass(frozen=True)
class Cells:
    """The run's design and each conversation's factor levels (by conversation id)."""

    design: Design = Design(())
    levels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, tables: RunTables, design: Design | None = None) -> Cells:
        design = design or Design.of(tables)
        conversations = tables.conversations
        known = bool(design.factors) and "conversation_id" in conversations.columns
        return cls(design, design.levels(conversations) if known else {})

    @property
    def extra(self) -> list[str]:
        """The declared factors beyond the arm keys, in the design's order."""
        return [f for f in self.design.factors if f not in ARM_KEYS]

    def split(self, frame: pd.DataFrame) -> list[tuple[Cell, pd.DataFrame]]:
        """The rows of `frame` (with a `conversation_id` column) per cell of the extra factors;
        one group, the whole frame, when the run declares none."""
        return cell_groups(frame, self.extra, self.levels)


def with_cell(row: Mapping[str, Any], cell: Cell, after: str) -> dict[str, Any]:
    """`row` with the cell's levels inserted right after its key `after` (so a row reads: arm,
    the other factors, its own keys, its figures)."""
    if not cell:
        return dict(row)
    result: dict[str, Any] = {}
    for key, value in row.items():
        result[key] = value
        if key == after:
            result.update(cell)
    return result
