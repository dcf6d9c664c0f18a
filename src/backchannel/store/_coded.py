"""Coded columns read back as whole arrays: names by code, conversation ids and run order.

A store keeps names (kind, agent, judge, model...) as integer codes and conversations by their
`conv` key. Reading millions of rows, a per-value dictionary lookup costs more than the read
itself, so the codes are resolved by one array look-up and one Arrow take per column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

_TABLE_SPAN = 1 << 22
"""Keys up to this are found through a table indexed by the key (a store numbers its names and
conversations from 1 up); larger ones by a sorted search."""


class Lookup:
    """Integer keys to texts, resolved for a whole array at once (an unknown key gives NA)."""

    def __init__(self, texts: Mapping[int, str]) -> None:
        import pyarrow as pa

        keys = np.fromiter(texts.keys(), dtype=np.int64, count=len(texts))
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        values = pa.array([*texts.values(), None], type=pa.string())
        self._texts = values.take(pa.array(np.append(order, len(keys))))
        self._by_text = texts
        self._ranks: np.ndarray | None = None
        self._table: np.ndarray | None = None
        if len(keys) and self.keys[0] >= 0 and self.keys[-1] < _TABLE_SPAN:
            # slot 0 for keys below 0, the last slot for keys above the last: both unknown
            table = np.full(int(self.keys[-1]) + 3, len(keys), dtype=np.int64)
            table[self.keys + 1] = np.arange(len(keys))
            self._table = table

    def positions(self, keys: np.ndarray) -> np.ndarray:
        """Each key's place among the known keys; unknown keys get the place after the last."""
        if not len(self.keys):
            return np.zeros(len(keys), dtype=np.int64)
        if self._table is not None:
            slots = np.clip(keys, -1, len(self._table) - 2) + 1
            found: np.ndarray = self._table[slots]
            return found
        near = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[near] == keys, near, len(self.keys))

    def texts(self, keys: np.ndarray) -> pd.Series:
        """The text of each key, as a `str` column (NA for an unknown key)."""
        return self.texts_at(self.positions(keys))

    def texts_at(self, positions: np.ndarray) -> pd.Series:
        """The texts at `positions` (as `positions` gives them), as a `str` column."""
        import pandas as pd
        import pyarrow as pa

        taken = self._texts.take(pa.array(positions))
        return pd.Series(pd.array(taken, dtype="str"))

    def categories(self, keys: np.ndarray) -> pd.Series:
        """The text of each key as a categorical column (NA for an unknown key): a code per row
        instead of a string. Its categories are the texts that occur, sorted, so the column
        sorts and groups as its texts do."""
        import pandas as pd

        positions = self.positions(keys)
        known = len(self.keys)
        present = np.flatnonzero(np.bincount(positions, minlength=known + 1)[:known])
        texts = [self._by_text[int(key)] for key in self.keys[present]]
        distinct = sorted(set(texts))
        place = {text: i for i, text in enumerate(distinct)}
        code_at = np.full(known + 1, -1, dtype=np.int32)
        code_at[present] = [place[text] for text in texts]
        dtype = pd.CategoricalDtype(pd.Index(distinct, dtype="str"))
        return pd.Series(pd.Categorical.from_codes(code_at[positions], dtype=dtype))

    def text_order(self, keys: np.ndarray) -> np.ndarray:
        """A sort key that orders the keys as their texts sort (NA last)."""
        if self._ranks is None:
            texts = self._by_text
            by_text = sorted(range(len(self.keys)), key=lambda i: texts[int(self.keys[i])])
            ranks = np.empty(len(self.keys) + 1, dtype=np.int64)
            ranks[by_text] = np.arange(len(by_text))
            ranks[-1] = len(by_text)  # NA sorts last, as pandas puts it
            self._ranks = ranks
        found: np.ndarray = self._ranks[self.positions(keys)]
        return found


def places(conversations: Lookup, rank: Mapping[int, int]) -> np.ndarray:
    """The run-order place of each of `conversations`' keys (`rank`, keyed alike), then one
    place after the last for an unknown conversation."""
    ranked = np.fromiter(rank.keys(), dtype=np.int64, count=len(rank))
    values = np.fromiter(rank.values(), dtype=np.int64, count=len(rank))
    order = np.argsort(ranked, kind="stable")
    ranked, values = ranked[order], values[order]
    if not len(ranked):
        return np.full(len(conversations.keys) + 1, len(rank), dtype=np.int64)
    near = np.minimum(np.searchsorted(ranked, conversations.keys), len(ranked) - 1)
    if not bool((ranked[near] == conversations.keys).all()):
        missing = conversations.keys[ranked[near] != conversations.keys][0]
        raise KeyError(int(missing))
    return np.append(values[near], len(rank))


def sort_order(columns: Sequence[np.ndarray]) -> np.ndarray | None:
    """The stable order that sorts the rows by `columns` (first the most significant), or None
    when they already are: checked in one pass per column, without sorting."""
    if not columns or len(columns[0]) < 2:
        return None
    tied = np.ones(len(columns[0]) - 1, dtype=bool)
    for column in columns:
        after, before = column[1:], column[:-1]
        if bool((tied & (after < before)).any()):
            return np.lexsort(columns[::-1])
        tied &= after == before
        if not bool(tied.any()):
            break
    return None


def run_order(
    convs: np.ndarray,
    conversations: Lookup,
    rank: Mapping[int, int],
    keys: Sequence[np.ndarray],
    coded: Sequence[Lookup | None],
) -> tuple[np.ndarray | None, np.ndarray]:
    """The stable order that sorts rows by run order (`rank` of each conv of `convs` in
    `conversations`), then by `keys` (a key with a `coded` lookup by its text), or None when
    they already are (the store reads rows in key order); and each row's place in
    `conversations`."""
    at = conversations.positions(convs)
    columns = [places(conversations, rank)[at]]
    for values, names in zip(keys, coded, strict=True):
        columns.append(values if names is None else names.text_order(values))
    return sort_order(columns), at
