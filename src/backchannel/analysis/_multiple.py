"""Multiple-comparison adjustments of a family of p-values (statsmodels multipletests).

A test that could not run has no p-value (None or NaN): it is left out of the family and keeps
None, so the adjustment is over the tests that ran, and the report can still show the others.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Sequence

from statsmodels.stats.multitest import multipletests


def _adjust(p_values: Sequence[float | None], method: str) -> list[float | None]:
    tested = [i for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    values = [float(p) for p in p_values if p is not None and not math.isnan(p)]
    for p in values:
        if not 0 <= p <= 1:
            raise ValueError(f"p-value {p} outside [0, 1]")
    adjusted: list[float | None] = [None] * len(p_values)
    if tested:
        corrected = _multipletests(values, method)
        for i, p in zip(tested, corrected, strict=True):
            adjusted[i] = float(p)
    return adjusted


def _multipletests(p_values: list[float], method: str) -> list[float]:
    """statsmodels' adjusted p-values. Its Holm ends with a full `gc.collect()`, which walks
    every object a large run's analysis holds (about half a second with five million): those
    are frozen for the call, so the collection sees only the call's own objects."""
    frozen_here = gc.get_freeze_count() == 0
    if frozen_here:
        gc.freeze()
    try:
        return [float(p) for p in multipletests(p_values, method=method)[1]]
    finally:
        if frozen_here:
            gc.unfreeze()


def bonferroni(p_values: Sequence[float | None]) -> list[float | None]:
    """Bonferroni: min(1, p x m) with m the tests that ran (Dunn 1961); None stays None."""
    return _adjust(p_values, "bonferroni")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the tests that ran (Holm 1979); None stays None."""
    return _adjust(p_values, "holm")
