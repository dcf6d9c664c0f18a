"""Input checks shared by every statistic: one-dimensional numbers, NaN counted then dropped."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Numbers = Sequence[float] | np.ndarray


def as_array(values: Numbers) -> np.ndarray:
    """A one-dimensional float array, or a ValueError naming the problem."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError("expected a one-dimensional sequence of numbers")
    return array


def drop_missing(values: Numbers) -> tuple[np.ndarray, int]:
    """The finite-or-infinite values without NaN, and how many NaN were left out."""
    array = as_array(values)
    keep = ~np.isnan(array)
    return array[keep], int((~keep).sum())


def drop_missing_pairs(first: Numbers, second: Numbers) -> tuple[np.ndarray, np.ndarray, int]:
    """Paired values with every pair that has a NaN on either side left out, and their count."""
    a, b = as_array(first), as_array(second)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length, got {len(a)} and {len(b)}")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep], int((~keep).sum())
