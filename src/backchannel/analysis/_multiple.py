"""Multiple-comparison adjustments of a family of p-values (statsmodels multipletests).

A test that could not run has no p-value (None or NaN): it is left out of the family and keeps
None, so the adjustment is over the tests that ran, and the report can still show the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from statsmodels.stats.multitest import multipletests


def _adjust(p_values: Sequence[float | None], method: str) -> list[float | None]:
    tested = [i for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    for i in tested:
        p = p_values[i]
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"p-value {p} outside [0, 1]")
    adjusted: list[float | None] = [None] * len(p_values)
    if tested:
        _, corrected, _, _ = multipletests([p_values[i] for i in tested], method=method)
        for i, p in zip(tested, corrected, strict=True):
            adjusted[i] = float(p)
    return adjusted


def bonferroni(p_values: Sequence[float | None]) -> list[float | None]:
    """Bonferroni: min(1, p x m) with m the tests that ran (Dunn 1961); None stays None."""
    return _adjust(p_values, "bonferroni")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the tests that ran (Holm 1979); None stays None."""
    return _adjust(p_values, "holm")
