"""The run's cells, from its design: which cell each finished conversation belongs to, and frames
split by cell, so every per-cell figure groups by every factor the run declared.

Levels are compared by value (a list or mapping level by its JSON text) and a missing level is
a cell of its own (never dropped); cells come in sorted order, as a sorted groupby gives them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.paradigms import is_model_key
from backchannel.paradigms.peer_pressure._base import done_conversations

Level = dict[str, Any]


def model_factors(design: Design) -> list[str]:
    """The factors that name agents' models (`model`, `models`, `*_model`, `*_models`): what a
    split by each agent's own model replaces."""
    return [f for f in design.factors if is_model_key(f)]


def _key(value: Any) -> tuple[int, Any]:
    """A sortable, hashable stand-in for one level: missing last, lists and mappings as JSON."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return (2, "")
    if isinstance(value, list | tuple | dict):
        return (1, json.dumps(value, sort_keys=True, default=str))
    return (0, value)


def _sorted(keys: set[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    try:
        return sorted(keys)
    except TypeError:  # levels of unlike types in one factor: order by their text
        return sorted(keys, key=str)


def _plain(value: Any) -> Any:
    """A level as stored, with a missing one as None."""
    return None if _key(value)[0] == 2 else value


class Cells:
    """The cells over grouping columns `by` (factors, then any extra keys), each the levels its
    conversations share, in sorted order; `split` cuts a frame keyed by conversation into them."""

    def __init__(self, frame: pd.DataFrame, by: Sequence[str], key: str = "conversation_id"):
        self.by = list(by)
        self.key = key
        columns = [frame[c].tolist() for c in self.by]
        rows = list(zip(*columns, strict=True)) if columns else [()] * len(frame)
        keys = [tuple(_key(v) for v in row) for row in rows]
        first: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for k, row in zip(keys, rows, strict=True):
            first.setdefault(k, row)
        order = _sorted(set(keys))
        self.levels: list[Level] = [
            {c: _plain(v) for c, v in zip(self.by, first[k], strict=True)} for k in order
        ]
        index = {k: i for i, k in enumerate(order)}
        self.codes = pd.Series([index[k] for k in keys], index=frame.index, dtype="int64")
        self._by_key = (
            dict(zip(frame[key].tolist(), self.codes.tolist(), strict=True))
            if key in frame.columns
            else {}
        )

    @classmethod
    def of(cls, tables: RunTables, by: Sequence[str]) -> Cells:
        """The cells of the run's finished conversations over `by` (factors of the design)."""
        return cls(done_conversations(tables), by)

    def code(self, frame: pd.DataFrame) -> pd.Series:
        """Each row's cell (an index into `levels`), by its conversation; -1 for none."""
        return frame[self.key].map(self._by_key).fillna(-1).astype("int64")

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
