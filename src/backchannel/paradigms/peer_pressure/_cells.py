"""The run's cells, from its design: which cell each finished conversation belongs to, and frames
split by cell, so every per-cell figure groups by every factor the run declared.

The cells and their order are the shared `analysis.cell_groups` (levels compared by value, a
list or mapping level by its JSON text, a missing level a cell of its own, never dropped); they
are found once over the conversations and looked up by conversation id for larger frames.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables, cell_groups
from backchannel.paradigms import is_model_key
from backchannel.paradigms.peer_pressure._base import done_conversations, text_codes

Level = dict[str, Any]


def model_factors(design: Design) -> list[str]:
    """The factors that name agents' models (`model`, `models`, `*_model`, `*_models`): what a
    split by each agent's own model replaces."""
    return [f for f in design.factors if is_model_key(f)]


class Cells:
    """The cells over grouping columns `by` (factors, then any extra keys) of `frame`, each the
    levels its rows share, in `cell_groups` order; `split` cuts a frame keyed by conversation
    (or by the rows of `frame` itself, `codes`) into them."""

    def __init__(self, frame: pd.DataFrame, by: Sequence[str], key: str = "conversation_id"):
        self.by = list(by)
        self.key = key
        plain = frame.reset_index(drop=True)
        groups = cell_groups(plain, self.by) if len(plain) else []
        self.levels: list[Level] = [dict(level) for level, _ in groups]
        codes = np.full(len(plain), -1, dtype=np.int64)
        for index, (_, part) in enumerate(groups):  # the parts' index: positions in `plain`
            codes[part.index.to_numpy()] = index
        self.codes = pd.Series(codes, index=frame.index, dtype="int64")
        self._by_key = (
            dict(zip(frame[key].tolist(), codes.tolist(), strict=True))
            if key in frame.columns
            else {}
        )
        self._keys = pd.Index(list(self._by_key))
        self._key_codes = np.fromiter(
            self._by_key.values(), dtype=np.int64, count=len(self._by_key)
        )
        # Unique text keys without missing ones: rows are matched by Arrow (`text_codes`).
        self._as_text = (
            isinstance(self._keys.dtype, pd.StringDtype)
            and self._keys.is_unique
            and not self._keys.hasnans
        )

    @classmethod
    def of(cls, tables: RunTables, by: Sequence[str]) -> Cells:
        """The cells of the run's finished conversations over `by` (factors of the design), found
        once per `by` inside `tables.reuse()`: every section splits by the same cells."""
        by = list(by)
        return tables.memo(
            ("pp.cells", cls, tuple(by)), lambda: cls(done_conversations(tables), by)
        )

    def code(self, frame: pd.DataFrame) -> pd.Series:
        """Each row's cell (an index into `levels`), by its conversation; -1 for none."""
        if not self._keys.is_unique:  # several missing keys (NaN): look each row up
            return frame[self.key].map(self._by_key).fillna(-1).astype("int64")
        values = frame[self.key]
        if self._as_text and isinstance(values.dtype, pd.StringDtype):
            found = text_codes(values, self._keys)
        else:
            found = self._keys.get_indexer(values)
        codes = np.full(len(frame), -1, dtype=np.int64)
        codes[found >= 0] = self._key_codes[found[found >= 0]]
        return pd.Series(codes, index=frame.index, dtype="int64")

    def split(
        self, frame: pd.DataFrame, *, every: bool = True, codes: pd.Series | None = None
    ) -> Iterator[tuple[Level, pd.DataFrame]]:
        """(levels, rows of `frame` in that cell) per cell in order; with `every`, cells without
        rows come too (an empty frame), so a cell with nothing to count says so. `codes` gives
        each row's cell directly (default: by its conversation)."""
        found = self.code(frame) if codes is None else codes
        parts: dict[Any, pd.DataFrame] = dict(list(frame.groupby(found.to_numpy(), sort=True)))
        for index, level in enumerate(self.levels):
            if index in parts:
                yield dict(level), parts[index]
            elif every:
                yield dict(level), frame.iloc[0:0]


def per_cell_rows(
    cells: Cells,
    frame: pd.DataFrame,
    build: Callable[[pd.DataFrame], Mapping[str, Any]],
    *,
    every: bool = True,
) -> list[dict[str, Any]]:
    """One row per cell: the cell's levels, then `build(rows of the cell)` (a mapping)."""
    return [{**level, **build(part)} for level, part in cells.split(frame, every=every)]
