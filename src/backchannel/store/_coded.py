"""Coded columns read back as whole arrays: names by code, conversation ids and run order.

A store keeps names (kind, agent, judge, model...) as integer codes and conversations by their
`conv` key. Reading millions of rows, a per-value dictionary lookup costs more than the read
itself, so the codes are resolved by one sorted search and one Arrow take per column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Lookup:
    """Integer keys to texts, resolved for a whole array at once (an unknown key gives NA)."""

    def __init__(self, texts: Mapping[int, str]) -> None:
        import pyarrow as pa

        self.keys = np.array(sorted(texts), dtype=np.int64)
        self._texts = pa.array([*(texts[int(k)] for k in self.keys), None], type=pa.string())
        by_text = sorted(range(len(self.keys)), key=lambda i: texts[int(self.keys[i])])
        ranks = np.empty(len(self.keys) + 1, dtype=np.int64)
        ranks[by_text] = np.arange(len(by_text))
        ranks[-1] = len(by_text)  # NA sorts last, as pandas puts it
        self._ranks = ranks

    def positions(self, keys: np.ndarray) -> np.ndarray:
        """Each key's place among the known keys; unknown keys get the place after the last."""
        if not len(self.keys):
            return np.zeros(len(keys), dtype=np.int64)
        found = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[found] == keys, found, len(self.keys))

    def texts(self, keys: np.ndarray) -> pd.Series:
        """The text of each key, as a `str` column (NA for an unknown key)."""
        import pandas as pd
        import pyarrow as pa

        taken = self._texts.take(pa.array(self.positions(keys)))
        return pd.Series(pd.array(taken, dtype="str"))

    def text_order(self, keys: np.ndarray) -> np.ndarray:
        """A sort key that orders the keys as their texts sort (NA last)."""
        ranks: np.ndarray = self._ranks[self.positions(keys)]
        return ranks


def run_order(
    frame: pd.DataFrame,
    conversations: Lookup,
    rank: Mapping[int, int],
    keys: Sequence[str],
    coded: Mapping[str, Lookup],
) -> pd.DataFrame:
    """`frame` (still coded, with its `conv` column) sorted by run order (`rank` of each conv
    in `conversations`), then by `keys` (a coded key by its text), as a stable sort would; no
    copy when it is already in order (the store reads rows in key order)."""
    if frame.empty:
        return frame.reset_index(drop=True)
    place = np.array([*(rank[int(k)] for k in conversations.keys), len(rank)], dtype=np.int64)
    columns = [place[conversations.positions(frame["conv"].to_numpy(dtype=np.int64))]]
    for key in keys:
        values = frame[key].to_numpy(dtype=np.int64)
        columns.append(coded[key].text_order(values) if key in coded else values)
    order = np.lexsort(columns[::-1])
    if np.array_equal(order, np.arange(len(order))):
        return frame.reset_index(drop=True)
    return frame.take(order).reset_index(drop=True)
