"""Exact power of a contrast's own interval where the outcome is a count: the chance, summed
over every outcome the assumed rates allow, that the interval `estimate_contrast` builds
(Welch for independent arms, Student-t on the paired differences) excludes zero.

A proportion's interval depends on the data only through each arm's sum and sum of squares of
the conversation values (shares j / m over m trials), and a paired proportion's on its two
discordant counts, so the sum is finite. It matters where the normal theory does not hold: an
arm that never varies (the interval is then a one-sample t whose spread shrinks with the
estimate), discordance one way, or few expected successes; there the t forms under-state the
power by up to 14 points (docs/statistics.md, "Planning a run"). A sum too large to enumerate
returns None, and the caller uses the t forms, which are good where that happens.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

MAX_TERMS = 4_000_000
"""Largest grid of outcomes enumerated; beyond it the normal theory is close enough."""
TAIL = 1e-12
"""Probability mass left out at each end of a count's range."""
DF_GRID = 256
"""Degrees of freedom at which the t quantile is computed (interpolated between)."""


def share_values(rate: float, trials: int, icc: float) -> np.ndarray:
    """The chance of j successes of m trials in one conversation (j = 0..m): binomial, or
    beta-binomial with intra-conversation correlation icc (Donner & Klar's design effect)."""
    j = np.arange(trials + 1)
    if rate <= 0 or rate >= 1 or icc <= 0 or trials == 1:
        return np.asarray(stats.binom.pmf(j, trials, min(max(rate, 0.0), 1.0)), dtype=float)
    scale = 1 / icc - 1
    return np.asarray(stats.betabinom.pmf(j, trials, rate * scale, (1 - rate) * scale), dtype=float)


def arm_moments(
    pmf: np.ndarray, n: int, rate: float, trials: int, icc: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every (mean, variance of the mean, chance) the sample of n conversations can have, from
    the distribution of its sum and sum of squares of successes; None past `MAX_TERMS`."""
    if trials == 1:  # a binary outcome: the sum of squares is the sum
        low, high = _count_range(n, rate)
        s = np.arange(low, high + 1, dtype=float)
        chance = np.asarray(stats.binom.pmf(s, n, rate), dtype=float)
        mean = s / n
        return mean, mean * (1 - mean) / (n - 1), chance
    flipped = rate > 0.5
    if flipped:  # count failures: the sums stay small, the moments are mapped back below
        pmf = pmf[::-1]
    p = 1 - rate if flipped else rate
    spread = math.sqrt(max(n * trials * p * (1 - p) * (1 + (trials - 1) * max(icc, 0.0)), 0.0))
    top = min(n * trials, math.ceil(n * trials * p + 9 * spread + 9))
    width = trials * top + 1
    if (top + 1) * width > MAX_TERMS:
        return None
    grid = np.zeros((top + 1, width))
    grid[0, 0] = 1.0
    for _ in range(n):
        step = np.zeros_like(grid)
        for j, chance in enumerate(pmf):
            if chance == 0 or j > top:
                continue
            step[j:, j * j :] += chance * grid[: top + 1 - j, : width - j * j]
        grid = step
    s1, s2 = np.nonzero(grid > 0)
    chance = grid[s1, s2]
    keep = chance > TAIL * 1e-3
    s1, s2, chance = s1[keep].astype(float), s2[keep].astype(float), chance[keep]
    if flipped:
        s2 = n * trials**2 - 2 * trials * s1 + s2
        s1 = n * trials - s1
    mean = s1 / (n * trials)
    variance = np.maximum(s2 / trials**2 - n * mean**2, 0.0) / (n - 1)
    return mean, variance / n, chance


def proportion_power(
    rates: tuple[float, float], n: int, trials: float, icc: float, alpha: float
) -> float | None:
    """Power of the Welch interval on two independent arms of n conversations, each a share
    over `trials` agents (rounded to whole agents); None where the sum is too large."""
    m = max(1, round(trials))
    arms = []
    for rate in rates:
        found = arm_moments(share_values(rate, m, icc), n, rate, m, icc)
        if found is None:
            return None
        arms.append(found)
    (mean1, var1, p1), (mean2, var2, p2) = arms
    if len(p1) * len(p2) > MAX_TERMS:
        return None
    difference = np.abs(mean1[:, None] - mean2[None, :])
    a, b = var1[:, None], var2[None, :]
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(total > 0, total**2 / ((a**2 + b**2) / (n - 1)), n - 1)
    df = np.clip(np.nan_to_num(df, nan=n - 1.0), n - 1, 2 * n - 2)
    critical = _t_quantile(df, 1 - alpha / 2, n - 1, 2 * n - 2)
    excluded = np.where(total > 0, difference > critical * np.sqrt(total), difference > 0)
    return float((p1[:, None] * p2[None, :] * excluded).sum())


def paired_power(p10: float, p01: float, n: int, alpha: float) -> float | None:
    """Power of the Student-t interval on n paired binary differences (+1 with chance p10, -1
    with p01, else 0); None where the sum is too large."""
    if n < 2:
        return 0.0
    low_a, high_a = _count_range(n, p10)
    low_b, high_b = _count_range(n, p01)
    if (high_a - low_a + 1) * (high_b - low_b + 1) > MAX_TERMS:
        return None
    a = np.arange(low_a, high_a + 1)[:, None]
    b = np.arange(low_b, high_b + 1)[None, :]
    rest = 1 - p10
    inner = 0.0 if rest <= 0 else min(max(p01 / rest, 0.0), 1.0)
    chance = stats.binom.pmf(a, n, p10) * stats.binom.pmf(b, n - a, inner)
    mean = (a - b) / n
    variance = np.maximum((a + b) / n - mean**2, 0.0) * n / (n - 1)
    critical = float(stats.t.ppf(1 - alpha / 2, n - 1))
    half = critical * np.sqrt(variance / n)
    excluded = np.where(half > 0, np.abs(mean) > half, mean != 0) & (a + b <= n)
    return float((chance * excluded).sum())


def _count_range(n: int, p: float) -> tuple[int, int]:
    if p <= 0:
        return 0, 0
    if p >= 1:
        return n, n
    return int(stats.binom.ppf(TAIL, n, p)), int(stats.binom.isf(TAIL, n, p))


def _t_quantile(df: np.ndarray, q: float, low: float, high: float) -> np.ndarray:
    """t quantiles at many degrees of freedom, interpolated on a grid between low and high."""
    if high <= low:
        return np.full(df.shape, float(stats.t.ppf(q, low)))
    grid = np.linspace(low, high, DF_GRID)
    return np.interp(df, grid, stats.t.ppf(q, grid))
