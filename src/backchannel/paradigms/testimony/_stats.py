"""The statistics of this paradigm: Wilson intervals, paired differences with exact tests.

Kept in one small module so that it can give way to backchannel.analysis once that carries
McNemar's test, the exact sign test and Wilson intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis import paired_bootstrap_diff_ci

NAN = float("nan")


def wilson(successes: int, n: int, confidence: float = 0.95) -> dict[str, float | int]:
    """A proportion with its Wilson score interval; n = 0 gives NaN (nothing to estimate)."""
    if n == 0:
        return {"estimate": NAN, "low": NAN, "high": NAN, "n": 0, "k": 0}
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return {
        "estimate": successes / n,
        "low": float(low),
        "high": float(high),
        "n": n,
        "k": successes,
    }


def mcnemar_exact(first: Sequence[int], second: Sequence[int]) -> float:
    """Exact McNemar p-value of paired binary outcomes (the exact sign test on discordant
    pairs); 1.0 when no pair is discordant."""
    a, b = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    table = [
        [int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())],
        [int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())],
    ]
    if table[0][1] + table[1][0] == 0:
        return 1.0
    return float(mcnemar(table, exact=True).pvalue)


def sign_test(differences: Sequence[float]) -> float:
    """Exact two-sided sign test of paired differences (zeros dropped); 1.0 when all are zero."""
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if len(d) == 0:
        return 1.0
    return float(stats.binomtest(int((d > 0).sum()), len(d), 0.5).pvalue)


def paired_difference(
    first: Sequence[float], second: Sequence[float], *, binary: bool = True, seed: int = 0
) -> dict[str, Any]:
    """mean(first - second) in percentage points over paired units, a 95 % percentile bootstrap
    interval, and an exact test (McNemar for 0/1 outcomes, else the sign test)."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) == 0:
        return {
            "estimate_pp": NAN,
            "low_pp": NAN,
            "high_pp": NAN,
            "n": 0,
            "p_value": NAN,
            "test": "none",
            "reason": "no paired units",
        }
    interval = paired_bootstrap_diff_ci(a, b, seed=seed)
    if binary:
        p, test = mcnemar_exact(a.astype(int).tolist(), b.astype(int).tolist()), "mcnemar_exact"
    else:
        p, test = sign_test((a - b).tolist()), "sign_test_exact"
    return {
        "estimate_pp": 100 * interval.estimate,
        "low_pp": 100 * interval.low,
        "high_pp": 100 * interval.high,
        "n": len(a),
        "p_value": p,
        "test": test,
    }
