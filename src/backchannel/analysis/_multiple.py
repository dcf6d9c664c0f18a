"""Multiple-comparison adjustments of a family of p-values, as statsmodels' `multipletests`
computes them (the tests compare both).

A test that could not run has no p-value (None or NaN): it is left out of the family and keeps
None, so the adjustment is over the tests that ran, and the report can still show the others.
`multipletests(method="holm")` ends with a full `gc.collect()`, which costs more the more objects
a large run holds; the same arithmetic is done here with numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def _adjust(p_values: Sequence[float | None], method: str) -> list[float | None]:
    tested = [i for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    for i in tested:
        p = p_values[i]
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"p-value {p} outside [0, 1]")
    adjusted: list[float | None] = [None] * len(p_values)
    if tested:
        corrected = _corrected(np.asarray([p_values[i] for i in tested], dtype=float), method)
        for i, p in zip(tested, corrected.tolist(), strict=True):
            adjusted[i] = float(p)
    return adjusted


def _corrected(p: np.ndarray, method: str) -> np.ndarray:
    """`multipletests(p, method=method)[1]`, step for step: sorted ascending, adjusted, capped at
    1 and put back in the given order."""
    order = np.argsort(p)
    ranked = np.take(p, order)
    n = len(ranked)
    if method == "bonferroni":
        corrected = ranked * float(n)
    elif method == "holm":
        corrected = np.maximum.accumulate(ranked * np.arange(n, 0, -1))
    else:
        raise ValueError(f"unknown adjustment {method!r}")
    corrected[corrected > 1] = 1
    found = np.empty_like(corrected)
    found[order] = corrected
    return found


def bonferroni(p_values: Sequence[float | None]) -> list[float | None]:
    """Bonferroni: min(1, p x m) with m the tests that ran (Dunn 1961); None stays None."""
    return _adjust(p_values, "bonferroni")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the tests that ran (Holm 1979); None stays None."""
    return _adjust(p_values, "holm")
