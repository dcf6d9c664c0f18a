"""The statistics of this paradigm: Wilson intervals, paired differences with exact tests.

Thin adapters from `backchannel.analysis` to the dictionaries this paradigm reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from backchannel.analysis import (
    mcnemar_test,
    paired_bootstrap_diff_ci,
    wilcoxon_signed_rank,
    wilson_interval,
)
from backchannel.analysis import (
    sign_test as exact_sign_test,
)

NAN = float("nan")
Test = Literal["mcnemar", "sign", "wilcoxon"]


def wilson(successes: int, n: int, confidence: float = 0.95) -> dict[str, Any]:
    """A proportion with its Wilson score interval; n = 0 gives NaN with `skipped` saying so."""
    interval = wilson_interval(successes, n, confidence=confidence)
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "n": n,
        "k": successes,
        "skipped": interval.skipped,
    }


def mcnemar_exact(first: Sequence[int], second: Sequence[int]) -> float:
    """Exact McNemar p-value of paired binary outcomes (the exact sign test on discordant
    pairs); 1.0 when no pair is discordant (no evidence of a change)."""
    result = mcnemar_test(first, second, exact=True)
    return 1.0 if result.skipped is not None else result.p_value


def sign_test(differences: Sequence[float]) -> float:
    """Exact two-sided sign test of paired differences (zeros dropped); 1.0 when all are zero."""
    result = exact_sign_test(differences)
    return 1.0 if result.skipped is not None else result.p_value


def paired_difference(
    first: Sequence[float],
    second: Sequence[float],
    *,
    binary: bool = True,
    test: Test | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """mean(first - second) in percentage points over paired units, a 95 % percentile bootstrap
    interval, and an exact test: McNemar for 0/1 outcomes, else the sign test, or the Wilcoxon
    signed-rank test with `test="wilcoxon"` (shares).

    When the test has nothing to test (no discordant pair, every difference zero) its p-value
    is NaN and `skipped` says why.
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    chosen = test or ("mcnemar" if binary else "sign")
    return dict(_paired_difference(a.tobytes(), b.tobytes(), chosen, seed))


@lru_cache(maxsize=256)
def _paired_difference(first: bytes, second: bytes, test: Test, seed: int) -> dict[str, Any]:
    """`paired_difference` of two float arrays given as bytes, memoised: the bootstrap reseeds
    every call, so equal samples give equal results, and one run's splits, checkpoints and
    measures repeat the same samples (at 10,000 conversations 354 calls hold 139 distinct)."""
    a, b = np.frombuffer(first, dtype=float), np.frombuffer(second, dtype=float)
    if len(a) == 0:
        return {
            "estimate_pp": NAN,
            "low_pp": NAN,
            "high_pp": NAN,
            "n": 0,
            "p_value": NAN,
            "test": "none",
            "reason": "no paired units",
            "skipped": "no paired units",
        }
    interval = paired_bootstrap_diff_ci(a, b, seed=seed)
    if test == "mcnemar":
        result, name = mcnemar_test(a, b, exact=True), "mcnemar_exact"
    elif test == "wilcoxon":
        result, name = wilcoxon_signed_rank(a, b), "wilcoxon_signed_rank"
    else:
        result, name = exact_sign_test(a, b), "sign_test_exact"
    return {
        "estimate_pp": 100 * interval.estimate,
        "low_pp": 100 * interval.low,
        "high_pp": 100 * interval.high,
        "n": len(a),
        "p_value": result.p_value,
        "test": name,
        "skipped": result.skipped,
    }
