"""How the dyad's figures are grouped: by the run's declared factors, never by a kept list.

The study's descriptive summaries pool some of the five levels it analyses (`LEVELS`): the
`overall` rows all five, the `by_pairing` rows stance, style and wording. Every other factor
the run declares (`rounds`, `temperature`, ...) is an `extra` factor: every row of every table
has its level, so two conditions are never averaged into one number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import Design, cell_groups

LEVELS = ("discussant_model", "opponent_model", "stance", "style", "wording")
"""The settings the study's analysis reads of every conversation (the pairing's two models,
stance, style, wording); the protocol records them in `meta.levels`."""
MODELS = ("discussant_model", "opponent_model")
WITHIN_PAIRING = ("stance", "style", "wording")

Cell = dict[str, Any]


@dataclass(frozen=True)
class Cells:
    """The run's design and each conversation's factor levels (by conversation id)."""

    design: Design = Design(())
    levels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def extra(self) -> list[str]:
        """Declared factors beyond the five analysis levels: a key of every row."""
        return [f for f in self.design.factors if f not in LEVELS]

    def overall(self, frame: pd.DataFrame) -> list[tuple[Cell, pd.DataFrame]]:
        """Rows pooling the pairings: one per cell of the extra factors (one if none)."""
        return cell_groups(frame, self.extra, self.levels)

    def by_pairing(self, frame: pd.DataFrame) -> list[tuple[Cell, pd.DataFrame]]:
        """One group per pairing and cell of the extra factors; its cell holds the declared
        factors among the two models, the extra factors, then `pairing`."""
        groups = cell_groups(frame, ["pairing", *self.extra], self.levels)
        return [(self._with_models(cell, group), group) for cell, group in groups]

    def by_cell(self, frame: pd.DataFrame) -> list[tuple[Cell, pd.DataFrame]]:
        """One group per cell of every declared factor, with its `pairing`."""
        return cell_groups(frame, [*self.design.factors, "pairing"], self.levels)

    def _with_models(self, cell: Cell, group: pd.DataFrame) -> Cell:
        known = bool(len(group)) and "conversation_id" in group.columns
        first = self.levels.get(str(group["conversation_id"].iloc[0]), {}) if known else {}
        ordered: Cell = {}
        for factor in self.design.factors:
            if factor in MODELS:
                ordered[factor] = first.get(factor)
            elif factor in cell:
                ordered[factor] = cell[factor]
        return {**ordered, "pairing": cell["pairing"]}

    def pooled(self, section: str) -> list[str]:
        """The declared factors a section's rows span (`overall`, `by_pairing`, `by_cell`)."""
        names = {"overall": LEVELS, "by_pairing": WITHIN_PAIRING, "by_cell": ()}[section]
        return self.design.pooled(names)
