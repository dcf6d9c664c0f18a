"""Agreement of two raters on the same items: percent agreement and Cohen's kappa."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its confusion table (rows rater A, columns rater B) over n items."""

    kappa: float
    percent_agreement: float
    expected_agreement: float
    n: int
    confusion: pd.DataFrame
    skipped: str | None = None
    missing: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "percent_agreement": self.percent_agreement,
            "expected_agreement": self.expected_agreement,
            "kappa": self.kappa,
            "skipped": self.skipped,
            "missing": self.missing,
        }


def _is_missing(value: object) -> bool:
    """None, NaN, pd.NA and NaT are no label."""
    if value is None:
        return True
    return bool(pd.api.types.is_scalar(value) and pd.isna(value))  # type: ignore[call-overload]


def cohens_kappa(
    first: Sequence[Any] | pd.Series,
    second: Sequence[Any] | pd.Series,
    *,
    labels: Sequence[Any] | None = None,
    names: tuple[str, str] = ("a", "b"),
) -> Kappa:
    """Cohen's kappa of two raters' labels of the same items: (p_o - p_e) / (1 - p_e).

    statsmodels.stats.inter_rater.cohens_kappa on the confusion table (Cohen 1960). `labels`
    fixes the table's rows and columns (default: every label either rater used, sorted). Items
    a rater left unlabelled (None/NaN) are left out and counted. Skipped with no items, or when
    chance agreement is 1 (both raters used one and the same label throughout), where kappa is
    0/0.
    """
    a, b = list(first), list(second)
    if len(a) != len(b):
        raise ValueError(f"the raters labelled {len(a)} and {len(b)} items; pair them first")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (_is_missing(x) or _is_missing(y))]
    missing = len(a) - len(pairs)
    levels = list(labels) if labels is not None else sorted({v for p in pairs for v in p}, key=str)
    unknown = {v for p in pairs for v in p} - set(levels)
    if unknown:
        raise ValueError(f"labels {sorted(map(str, unknown))} are not among {levels}")
    index = {label: i for i, label in enumerate(levels)}
    table = np.zeros((len(levels), len(levels)), dtype=int)
    for x, y in pairs:
        table[index[x], index[y]] += 1
    confusion = pd.DataFrame(
        table, index=pd.Index(levels, name=names[0]), columns=pd.Index(levels, name=names[1])
    )
    n = len(pairs)
    if n == 0:
        return Kappa(
            math.nan, math.nan, math.nan, 0, confusion, "no item labelled by both", missing
        )
    observed = float(np.trace(table)) / n
    expected = float((table.sum(axis=1) * table.sum(axis=0)).sum()) / n**2
    if expected == 1:
        return Kappa(
            math.nan,
            observed,
            expected,
            n,
            confusion,
            "both raters gave every item the same single label: kappa is 0/0",
            missing,
        )
    # statsmodels is imported here, not at module level: most analyses never compute a kappa,
    # and its import is a quarter of a second of every `metrics` call.
    from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

    kappa = float(statsmodels_kappa(table, return_results=False))
    return Kappa(kappa, observed, expected, n, confusion, None, missing)
