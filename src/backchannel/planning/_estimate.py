"""A contrast's estimate in each stratum: the difference of the arms' conversation means with a
Welch interval (independent arms) or the mean paired difference with a Student-t interval
(paired arms), plus what planning reads of each arm (sd, intra-conversation correlation).

Intervals: statsmodels' `CompareMeans.tconfint_diff(usevar="unequal")` (Welch-Satterthwaite
degrees of freedom) and `analysis.t_mean_ci` on the paired differences; docs/statistics.md.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backchannel.analysis import cell_groups, t_mean_ci
from backchannel.planning._contrast import (
    CONFIDENCE,
    ArmSummary,
    Contrast,
    ContrastEstimate,
    ContrastReading,
)
from backchannel.planning._units import FIRST, SECOND, Units, contrast_units

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.planning._contrast import Options

WELCH = "welch"
PAIRED_T = "paired_t"


def read_contrast(
    contrast: Contrast, tables: RunTables, options: Options, *, confidence: float = CONFIDENCE
) -> ContrastReading:
    """The contrast in every stratum of a stored run, with intervals and half-widths."""
    return estimate_contrast(
        contrast, contrast_units(contrast, tables, options), confidence=confidence
    )


def estimate_contrast(
    contrast: Contrast, units: Units, *, confidence: float = CONFIDENCE
) -> ContrastReading:
    """One row per stratum whose two arms both have conversations (a stratum the run has no
    conversation of in one arm is not part of this run's contrast)."""
    rows = []
    for stratum, group in cell_groups(units.frame, list(units.strata)):
        arms = set(group["arm"])
        if FIRST not in arms or SECOND not in arms:
            continue
        rows.append(stratum_estimate(contrast, stratum, group, confidence))
    return ContrastReading(contrast, tuple(rows))


def stratum_estimate(
    contrast: Contrast, stratum: dict[str, Any], group: pd.DataFrame, confidence: float
) -> ContrastEstimate:
    first = group[group["arm"] == FIRST]
    second = group[group["arm"] == SECOND]
    summaries = (
        summarise_arm(first, contrast.proportion),
        summarise_arm(second, contrast.proportion),
    )
    if contrast.paired:
        return _paired(contrast, stratum, first, second, summaries, confidence)
    return _independent(contrast, stratum, first, second, summaries, confidence)


def summarise_arm(rows: pd.DataFrame, proportion: bool) -> ArmSummary:
    """n, mean and sd of the values; for a proportion over trials, the mean trials and the
    ANOVA estimate of the intra-conversation correlation."""
    kept = rows[rows["value"].notna()]
    values = kept["value"].to_numpy(dtype=float)
    n = len(values)
    missing = len(rows) - n
    mean = float(values.mean()) if n else None
    sd = float(values.std(ddof=1)) if n > 1 else None
    trials = icc = None
    if proportion and n:
        sizes = kept["trials"].to_numpy(dtype=float)
        trials = float(sizes.mean())
        icc = intra_correlation(values * sizes, sizes)
    return ArmSummary(n=n, mean=mean, sd=sd, missing=missing, trials=trials, icc=icc)


def intra_correlation(successes: np.ndarray, sizes: np.ndarray) -> float | None:
    """The one-way ANOVA estimator of the intra-cluster correlation of a binary outcome over
    clusters of unequal size (Fleiss, Levin & Paik 2003, sec. 15.3), at least 0; None with
    fewer than two clusters, clusters of one, or no variation at all."""
    keep = sizes > 0
    y, m = successes[keep], sizes[keep]
    k, total = len(m), float(m.sum())
    if k < 2 or total - k <= 0:
        return None
    p = y / m
    pooled = float(y.sum()) / total
    between = float((m * (p - pooled) ** 2).sum()) / (k - 1)
    within = float((m * p * (1 - p)).sum()) / (total - k)
    m0 = (total - float((m**2).sum()) / total) / (k - 1)
    denominator = between + (m0 - 1) * within
    if denominator <= 0:
        return None
    return max(0.0, (between - within) / denominator)


def _independent(
    contrast: Contrast,
    stratum: dict[str, Any],
    first: pd.DataFrame,
    second: pd.DataFrame,
    summaries: tuple[ArmSummary, ArmSummary],
    confidence: float,
) -> ContrastEstimate:
    a, b = summaries
    base: dict[str, Any] = {
        "contrast": contrast.name,
        "stratum": stratum,
        "first": a,
        "second": b,
        "method": WELCH,
    }
    if a.n == 0 or b.n == 0 or a.mean is None or b.mean is None:
        arm = contrast.first if a.n == 0 else contrast.second
        return ContrastEstimate(
            **base, estimate=None, low=None, high=None, skipped=f"no value in arm {arm.label()}"
        )
    difference = a.mean - b.mean
    if a.n < 2 or b.n < 2:
        return ContrastEstimate(
            **base,
            estimate=difference,
            low=None,
            high=None,
            skipped="an arm has one value: no spread to build an interval from",
        )
    assert a.sd is not None and b.sd is not None
    if a.sd == 0 and b.sd == 0:
        return ContrastEstimate(**base, estimate=difference, low=difference, high=difference)
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    x = first["value"].dropna().to_numpy(dtype=float)
    y = second["value"].dropna().to_numpy(dtype=float)
    compare = CompareMeans(DescrStatsW(x), DescrStatsW(y))
    low, high = compare.tconfint_diff(alpha=1 - confidence, usevar="unequal")
    return ContrastEstimate(**base, estimate=difference, low=float(low), high=float(high))


def _paired(
    contrast: Contrast,
    stratum: dict[str, Any],
    first: pd.DataFrame,
    second: pd.DataFrame,
    summaries: tuple[ArmSummary, ArmSummary],
    confidence: float,
) -> ContrastEstimate:
    keys = list(contrast.pair_by)
    left = first.dropna(subset=["value"]).drop_duplicates(keys)[[*keys, "value"]]
    right = second.dropna(subset=["value"]).drop_duplicates(keys)[[*keys, "value"]]
    both = left.astype({k: str for k in keys}).merge(
        right.astype({k: str for k in keys}), on=keys, suffixes=("_first", "_second")
    )
    x = both["value_first"].to_numpy(dtype=float)
    y = both["value_second"].to_numpy(dtype=float)
    differences = x - y
    interval = t_mean_ci(differences, confidence=confidence)
    discordant = None
    if contrast.proportion:
        discordant = (int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum()))
    sd = float(differences.std(ddof=1)) if len(differences) > 1 else None
    correlation = None
    if len(x) > 2 and x.std() > 0 and y.std() > 0:
        correlation = float(np.corrcoef(x, y)[0, 1])
    estimate = None if math.isnan(interval.estimate) else interval.estimate
    skipped = interval.skipped
    if len(both) == 0:
        skipped = f"no pair of conversations (by {', '.join(keys)}) has values in both arms"
    low = None if interval.skipped else interval.low
    high = None if interval.skipped else interval.high
    return ContrastEstimate(
        contrast=contrast.name,
        stratum=stratum,
        estimate=estimate,
        low=low,
        high=high,
        first=summaries[0],
        second=summaries[1],
        pairs=len(both),
        discordant=discordant,
        sd_difference=sd,
        correlation=correlation,
        method=PAIRED_T,
        skipped=skipped,
    )
