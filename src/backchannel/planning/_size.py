"""Sample sizes for one contrast in one stratum: the units per arm (pairs, for paired kinds) a
target interval half-width or a power at a stated effect needs, and the half-width and power a
given size predicts.

The interval is the one `read_contrast` reports (Welch for independent arms, Student-t on the
paired differences), and power is the chance that interval excludes zero: statsmodels'
`TTestIndPower` (independent arms, the effect standardised by the root mean arm variance) and
`TTestPower` (paired arms, by the sd of the differences). A proportion's per-conversation
variance is p(1 - p) / m * (1 + (m - 1) rho) over m trials with intra-conversation correlation
rho (the design effect of Donner & Klar 2000). docs/statistics.md, "Planning a run".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from scipy import stats

from backchannel.planning._contrast import Kind

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
    """The chance the contrast's interval at level 1 - alpha excludes zero with n units per
    arm (pairs), at the assumption's difference."""
    from statsmodels.stats.power import TTestIndPower, TTestPower

    effect = _standardised(assumption)
    if effect is None or n < 2:
        return math.nan if effect is None else 0.0
    if math.isinf(effect):
        return 1.0
    if assumption.paired:
        power = float(TTestPower().power(effect_size=effect, nobs=n, alpha=alpha))
        noncentrality = effect * math.sqrt(n)
    else:
        power = float(TTestIndPower().power(effect_size=effect, nobs1=n, alpha=alpha, ratio=1.0))
        noncentrality = effect * math.sqrt(n / 2)
    if math.isnan(power):  # the noncentral t's tail underflows far beyond the critical value
        z = float(stats.norm.ppf(1 - alpha / 2))
        power = float(stats.norm.cdf(noncentrality - z))
    return power


def units_for_power(assumption: Assumption, power: float, alpha: float = 0.05) -> int:
    """The fewest units per arm (pairs) at which `predicted_power` reaches `power`."""
    if not 0 < power < 1:
        raise ValueError("the power must lie strictly between 0 and 1")
    effect = _standardised(assumption)
    if effect is None:
        raise ValueError("no difference between the arms: no size gives power against it")
    if math.isinf(effect):
        return 2
    from statsmodels.stats.power import TTestIndPower, TTestPower

    if assumption.paired:
        found = TTestPower().solve_power(effect_size=effect, alpha=alpha, power=power)
    else:
        found = TTestIndPower().solve_power(effect_size=effect, alpha=alpha, power=power)
    n = max(2, math.ceil(float(found) - 1e-9))
    while n > 2 and predicted_power(assumption, n - 1, alpha) >= power:
        n -= 1
    while predicted_power(assumption, n, alpha) < power:
        n += 1
    return n


def _standardised(assumption: Assumption) -> float | None:
    """Cohen's d the analysis sees: the difference over the paired sd, or over the root mean
    of the arms' variances (Welch with equal arms); None without a difference."""
    difference = abs(assumption.difference)
    if difference == 0:
        return None
    scale = assumption.spread if assumption.paired else assumption.spread / math.sqrt(2)
    return math.inf if scale == 0 else difference / scale
