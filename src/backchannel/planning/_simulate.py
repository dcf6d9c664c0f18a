"""Half-width and power by simulation: runs of n conversations per arm (n pairs, for paired
kinds) drawn with replacement from a pilot's conversations of one stratum, each estimated by
the contrast's own interval (Welch, or Student-t on the paired differences: the formulas of
`estimate_contrast`, computed for all runs at once), with a seeded generator.

It makes no assumption about the outcome's distribution (a bounded mean of few evaluators, a
share over agents of one conversation), so it checks the closed forms where they are only
approximate, and `backchannel plan --simulate` prints it beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from backchannel.planning._contrast import Contrast
from backchannel.planning._units import FIRST, SECOND, Units


@dataclass(frozen=True)
class Simulated:
    """What simulated runs of one size achieved: the mean half-width, the share whose interval
    excludes zero, and the runs that gave an interval."""

    n: int
    runs: int
    halfwidth: float | None
    power: float | None


def simulate(
    contrast: Contrast,
    units: Units,
    stratum: Mapping[str, Any],
    n: int,
    *,
    runs: int = 400,
    seed: int = 0,
    alpha: float = 0.05,
) -> Simulated:
    """`runs` simulated runs of n units per arm (pairs) from the stratum's conversations."""
    if n < 2 or runs < 1:
        raise ValueError("simulate at least two units per arm and one run")
    pools = pools_of(contrast, units, stratum)
    if any(len(pool) == 0 for pool in pools):
        return Simulated(n, 0, None, None)
    rng = np.random.default_rng(seed)
    if contrast.paired:
        chosen = rng.integers(0, len(pools[0]), (runs, n))
        low, high = paired_intervals(pools[0][chosen] - pools[1][chosen], 1 - alpha)
    else:
        first = pools[0][rng.integers(0, len(pools[0]), (runs, n))]
        second = pools[1][rng.integers(0, len(pools[1]), (runs, n))]
        low, high = welch_intervals(first, second, 1 - alpha)
    kept = ~np.isnan(low)
    if not kept.any():
        return Simulated(n, 0, None, None)
    widths = (high[kept] - low[kept]) / 2
    rejected = (low[kept] > 0) | (high[kept] < 0)
    return Simulated(n, int(kept.sum()), float(widths.mean()), float(rejected.mean()))


def pools_of(contrast: Contrast, units: Units, stratum: Mapping[str, Any]) -> list[np.ndarray]:
    """The stratum's values per arm (independent), or its pairs' two values, aligned."""
    frame = _in_stratum(units.frame, stratum)
    frame = frame[frame["value"].notna()]
    return _pairs(contrast, frame) if contrast.paired else _arms(frame)


def welch_intervals(
    first: np.ndarray, second: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise Welch intervals of mean(first) - mean(second), as `estimate_contrast` gives
    them (no spread in either arm: the zero-width interval at the difference)."""
    n1, n2 = first.shape[1], second.shape[1]
    difference = first.mean(axis=1) - second.mean(axis=1)
    a = first.var(axis=1, ddof=1) / n1
    b = second.var(axis=1, ddof=1) / n2
    se = np.sqrt(a + b)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1))
    half = np.where(se > 0, stats.t.ppf(0.5 + confidence / 2, np.where(se > 0, df, 1)) * se, 0.0)
    return difference - half, difference + half


def paired_intervals(differences: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise Student-t intervals of the mean paired difference (`t_mean_ci`)."""
    n = differences.shape[1]
    mean = differences.mean(axis=1)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * differences.std(axis=1, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def units_by_simulation(
    contrast: Contrast,
    units: Units,
    stratum: Mapping[str, Any],
    start: int,
    *,
    halfwidth: float | None = None,
    power: float | None = None,
    runs: int = 400,
    seed: int = 0,
    alpha: float = 0.05,
) -> Simulated:
    """The fewest units per arm (pairs), searched from `start`, whose simulated runs reach the
    target half-width (mean) or power; the same seed at every size (common random numbers)."""

    def reached(found: Simulated) -> bool:
        if halfwidth is not None:
            return found.halfwidth is not None and found.halfwidth <= halfwidth
        return found.power is not None and power is not None and found.power >= power

    def at(n: int) -> Simulated:
        return simulate(contrast, units, stratum, n, runs=runs, seed=seed, alpha=alpha)

    n = max(2, start)
    found = at(n)
    if reached(found):
        while n > 2:
            smaller = at(max(2, n - max(1, n // 20)))
            if not reached(smaller):
                break
            n, found = smaller.n, smaller
        return found
    while not reached(found):
        n += max(1, n // 20)
        if n > 100_000:
            raise ValueError(f"{contrast.name}: no size up to 100,000 per arm reaches the target")
        found = at(n)
    return found


def _in_stratum(frame: pd.DataFrame, stratum: Mapping[str, Any]) -> pd.DataFrame:
    keep = np.ones(len(frame), dtype=bool)
    for key, level in stratum.items():
        keep &= (frame[key].astype(str) == str(level)).to_numpy()
    return frame[keep]


def _arms(frame: pd.DataFrame) -> list[np.ndarray]:
    return [
        frame.loc[frame["arm"] == arm, "value"].to_numpy(dtype=float) for arm in (FIRST, SECOND)
    ]


def _pairs(contrast: Contrast, frame: pd.DataFrame) -> list[np.ndarray]:
    """The (first, second) values of every pair with both, as two aligned arrays."""
    keys = list(contrast.pair_by)
    sides = [
        frame[frame["arm"] == arm].astype({k: str for k in keys}).drop_duplicates(keys)
        for arm in (FIRST, SECOND)
    ]
    both = sides[0][[*keys, "value"]].merge(sides[1][[*keys, "value"]], on=keys)
    return [both["value_x"].to_numpy(dtype=float), both["value_y"].to_numpy(dtype=float)]
