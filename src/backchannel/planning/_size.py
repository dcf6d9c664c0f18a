"""Sample sizes for one contrast in one stratum: the units per arm (pairs, for paired kinds) a
target interval half-width or a power at a stated effect needs, and the half-width and power a
given size predicts.

The interval is the one `read_contrast` reports (Welch for independent arms, Student-t on the
paired differences), and power is the chance that interval excludes zero: summed exactly over
the counts a proportion or paired proportion allows (`_exact`), and for means the noncentral t
at the interval's own degrees of freedom (Welch-Satterthwaite with the arms' own variances;
with equal variances, statsmodels' `TTestIndPower`; paired, `TTestPower`). A proportion's
per-conversation variance is p(1 - p) / m * (1 + (m - 1) rho) over m trials with intra-
conversation correlation rho (the design effect of Donner & Klar 2000). docs/statistics.md,
"Planning a run".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from scipy import stats

from backchannel.planning._contrast import Kind
from backchannel.planning._exact import paired_power, proportion_power

MAX_UNITS = 10_000_000


@dataclass(frozen=True)
class Assumption:
    """What a size rests on: each arm's mean (a rate, for proportions) and per-unit sd, the sd
    of the paired differences for paired kinds, and where they came from."""

    kind: Kind
    first: float
    second: float
    sd_first: float
    sd_second: float
    sd_difference: float | None = None
    trials: float = 1.0
    icc: float = 0.0
    correlation: float = 0.0
    source: str = "stated"

    @property
    def paired(self) -> bool:
        return self.kind in ("paired_proportion", "paired_mean")

    @property
    def difference(self) -> float:
        return self.first - self.second

    @property
    def spread(self) -> float:
        """The sd that scales the estimate: of the paired differences, or sqrt(s1^2 + s2^2)."""
        if self.paired:
            if self.sd_difference is not None:
                return self.sd_difference
            return paired_sd(self.sd_first, self.sd_second, self.correlation)
        return math.sqrt(self.sd_first**2 + self.sd_second**2)

    def at_effect(self, effect: float) -> Assumption:
        """The same arms with the first moved to `second + effect` (a proportion's sd follows
        its rate; a stated paired sd is rebuilt from the arms' sds and correlation)."""
        first = self.second + effect
        sd_first = self.sd_first
        if self.kind in ("proportion", "paired_proportion"):
            if not 0 <= first <= 1:
                raise ValueError(f"effect {effect}: the first arm's rate {first:.3g} is no rate")
            sd_first = proportion_sd(first, self.trials, self.icc)
        moved = replace(self, first=first, sd_first=sd_first)
        if self.paired:
            moved = replace(
                moved, sd_difference=paired_sd(sd_first, self.sd_second, self.correlation)
            )
        return moved


def proportion_sd(rate: float, trials: float = 1.0, icc: float = 0.0) -> float:
    """The sd of one conversation's share over `trials` agents with correlation `icc`."""
    m = max(trials, 1.0)
    return math.sqrt(rate * (1 - rate) / m * (1 + (m - 1) * icc))


def paired_sd(sd_first: float, sd_second: float, correlation: float) -> float:
    """sd(X - Y) = sqrt(sx^2 + sy^2 - 2 r sx sy)."""
    variance = sd_first**2 + sd_second**2 - 2 * correlation * sd_first * sd_second
    return math.sqrt(max(variance, 0.0))


def _df(assumption: Assumption, n: int) -> float:
    """Degrees of freedom of the interval at n units per arm (Welch-Satterthwaite)."""
    if assumption.paired:
        return n - 1
    a, b = assumption.sd_first**2, assumption.sd_second**2
    if a + b == 0:
        return 2 * n - 2
    return (n - 1) * (a + b) ** 2 / (a**2 + b**2)


def predicted_halfwidth(assumption: Assumption, n: int, confidence: float = 0.95) -> float:
    """The interval half-width n units per arm (pairs) give: t(df) * spread / sqrt(n)."""
    if n < 2:
        return math.inf
    quantile = float(stats.t.ppf(0.5 + confidence / 2, _df(assumption, n)))
    return quantile * assumption.spread / math.sqrt(n)


def units_for_halfwidth(assumption: Assumption, target: float, confidence: float = 0.95) -> int:
    """The fewest units per arm (pairs) whose predicted half-width is at most `target`."""
    if target <= 0:
        raise ValueError("the half-width must be positive")
    if assumption.spread == 0:
        return 2
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    n = max(2, math.ceil((z * assumption.spread / target) ** 2))
    while predicted_halfwidth(assumption, n, confidence) > target:
        n += max(1, n // 200)
        if n > MAX_UNITS:
            raise ValueError("more than ten million conversations per arm would be needed")
    while n > 2 and predicted_halfwidth(assumption, n - 1, confidence) <= target:
        n -= 1
    return n


def predicted_power(assumption: Assumption, n: int, alpha: float = 0.05) -> float:
    """The chance the contrast's own interval at level 1 - alpha excludes zero with n units
    per arm (pairs), at the assumption's difference: summed exactly over the counts a
    proportion allows (`_exact`), else the noncentral t at the interval's own degrees of
    freedom (Welch-Satterthwaite with the arms' own variances, or n - 1 for pairs)."""
    if assumption.difference == 0:
        return math.nan
    if n < 2:
        return 0.0
    exact = _exact_power(assumption, n, alpha)
    return t_power(assumption, n, alpha) if exact is None else exact


def t_power(assumption: Assumption, n: int, alpha: float = 0.05) -> float:
    """Power of a t interval on normal outcomes: P(|T| > t(df)) with T noncentral t at the
    difference over its standard error, df the interval's (Welch-Satterthwaite, or n - 1)."""
    if n < 2:
        return 0.0
    se = assumption.spread / math.sqrt(n)
    difference = abs(assumption.difference)
    if se == 0:
        return 1.0 if difference > 0 else 0.0
    df = _df(assumption, n)
    critical = float(stats.t.ppf(1 - alpha / 2, df))
    noncentrality = difference / se
    power = float(
        stats.nct.sf(critical, df, noncentrality) + stats.nct.cdf(-critical, df, noncentrality)
    )
    if math.isnan(power):  # the noncentral t's tail underflows far beyond the critical value
        power = float(stats.norm.cdf(noncentrality - float(stats.norm.ppf(1 - alpha / 2))))
    return min(max(power, 0.0), 1.0)


def discordant_shares(assumption: Assumption) -> tuple[float, float]:
    """A paired proportion's (p10, p01), from p10 - p01 = the difference and p10 + p01 = the
    variance of the differences plus the difference squared."""
    difference = assumption.difference
    discordant = min(assumption.spread**2 + difference**2, 1.0)
    p10 = min(max((discordant + difference) / 2, 0.0), 1.0)
    p01 = min(max((discordant - difference) / 2, 0.0), 1.0 - p10)
    return p10, p01


def _exact_power(assumption: Assumption, n: int, alpha: float) -> float | None:
    """The exact sum where the outcome is a count (see `_exact`), else None."""
    if assumption.kind == "paired_proportion" and assumption.trials <= 1:
        p10, p01 = discordant_shares(assumption)
        return paired_power(p10, p01, n, alpha)
    if assumption.kind == "proportion":
        rates = (assumption.first, assumption.second)
        if all(0 <= r <= 1 for r in rates):
            return proportion_power(rates, n, assumption.trials, assumption.icc, alpha)
    return None


def units_for_power(assumption: Assumption, power: float, alpha: float = 0.05) -> int:
    """The fewest units per arm (pairs) at which `predicted_power` reaches `power`, searched
    from the normal approximation's size (down while one fewer still reaches it, then up)."""
    if not 0 < power < 1:
        raise ValueError("the power must lie strictly between 0 and 1")
    difference = abs(assumption.difference)
    if difference == 0:
        raise ValueError("no difference between the arms: no size gives power against it")
    if assumption.spread == 0:
        return 2
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    n = max(2, math.ceil((z * assumption.spread / difference) ** 2))
    if n > MAX_UNITS:
        raise ValueError("more than ten million conversations per arm would be needed")
    while n > 2 and predicted_power(assumption, n - 1, alpha) >= power:
        n -= 1
    while predicted_power(assumption, n, alpha) < power:
        n += 1
        if n > MAX_UNITS:
            raise ValueError("more than ten million conversations per arm would be needed")
    return n
