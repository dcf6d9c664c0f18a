"""One row of a plan: a contrast in one stratum, what it assumes, the units per arm its target
needs, the conversations per cell that makes, and the half-width and power that size predicts."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from backchannel.planning._contrast import Contrast
from backchannel.planning._simulate import units_by_simulation
from backchannel.planning._size import (
    Assumption,
    predicted_halfwidth,
    predicted_power,
    units_for_halfwidth,
    units_for_power,
)
from backchannel.planning._units import FIRST, SECOND

if TYPE_CHECKING:
    from backchannel.planning._units import Units


@dataclass(frozen=True)
class Target:
    """What the plan sizes for: an interval half-width, or a power at an effect (None: at the
    pilot's own difference)."""

    halfwidth: float | None = None
    power: float | None = None
    effect: float | None = None
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if (self.halfwidth is None) == (self.power is None):
            raise ValueError("give a target half-width or a target power (one of the two)")
        if self.halfwidth is not None and self.halfwidth <= 0:
            raise ValueError("the half-width must be positive")
        if not 0 < self.alpha < 1:
            raise ValueError("alpha must lie strictly between 0 and 1")


@dataclass(frozen=True)
class PlanRow:
    """A contrast in one stratum: its assumption, the units per arm (pairs) the target needs,
    the cells each arm pools and the conversations per cell, and what that size predicts."""

    contrast: str
    stratum: dict[str, Any]
    assumption: Assumption
    units: int
    cells_first: int
    cells_second: int
    per_cell: int
    halfwidth: float
    power: float | None
    method: str = "closed form"
    """`closed form`, or `simulated` (runs drawn from the pilot's conversations)."""
    closed_units: int | None = None
    """With `simulated`: the units per arm the closed form gives, for comparison."""
    shares: tuple[float, float] = (1.0, 1.0)
    """The share of each arm's conversations (of the cells it pools) that fall in the stratum:
    below 1 where the stratum is a key a reader adds (a model label, a scenario)."""

    def as_dict(self) -> dict[str, Any]:
        a = self.assumption
        return {
            "contrast": self.contrast,
            "stratum": dict(self.stratum),
            "kind": a.kind,
            "source": a.source,
            "first": a.first,
            "second": a.second,
            "difference": a.difference,
            "sd": a.spread,
            "icc": a.icc,
            "units_per_arm": self.units,
            "cells_first": self.cells_first,
            "cells_second": self.cells_second,
            "conversations_per_cell": self.per_cell,
            "halfwidth": self.halfwidth,
            "power": self.power,
            "method": self.method,
            "closed_form_units_per_arm": self.closed_units,
            "stratum_share_first": self.shares[0],
            "stratum_share_second": self.shares[1],
        }


def arm_cells(
    contrast: Contrast, cells: Sequence[Mapping[str, Any]], stratum: Mapping[str, Any]
) -> tuple[int, int]:
    """How many cells of the design (each as its levels over its resolved settings) each arm
    pools within the stratum (stratum keys a cell lacks, such as a reader's label, match)."""

    def inside(cell: Mapping[str, Any]) -> bool:
        return all(k not in cell or str(cell[k]) == str(v) for k, v in stratum.items())

    first = sum(1 for c in cells if inside(c) and contrast.first.matches(c))
    second = sum(1 for c in cells if inside(c) and contrast.second.matches(c))
    return first, second


def stratum_shares(
    contrast: Contrast,
    units: Units,
    stratum: Mapping[str, Any],
    cells: Sequence[Mapping[str, Any]],
) -> tuple[float, float]:
    """Each arm's share of a pilot's conversations, within the cells the stratum selects, that
    are in the stratum: 1 for a stratum of the design's own levels, less for one whose keys no
    cell has (a reader's label), whose conversations are only part of each cell."""
    known = {key for cell in cells for key in cell}
    added = [key for key in stratum if key not in known]
    if not added:
        return 1.0, 1.0
    frame = units.frame
    shares = []
    for arm in (FIRST, SECOND):
        rows = frame[frame["arm"] == arm]
        inside = np.ones(len(rows), dtype=bool)
        for key, level in stratum.items():
            if key in known:
                inside &= (rows[key].astype(str) == str(level)).to_numpy()
        within = inside.copy()
        for key in added:
            within &= (rows[key].astype(str) == str(stratum[key])).to_numpy()
        shares.append(float(within.sum()) / float(inside.sum()) if inside.sum() else 1.0)
    return shares[0], shares[1]


def plan_row(
    contrast: Contrast,
    stratum: Mapping[str, Any],
    assumption: Assumption,
    target: Target,
    cells: tuple[int, int],
    confidence: float = 0.95,
    *,
    pilot: Units | None = None,
    runs: int = 400,
    seed: int = 0,
    shares: tuple[float, float] = (1.0, 1.0),
) -> PlanRow:
    """The units per arm the target needs under the assumption (at the target's effect, when
    it states one), and the conversations per cell that makes. With the pilot's units (and no
    stated effect), the size is searched by simulated runs drawn from them, starting at the
    closed form's. `shares` (`stratum_shares`) scale the conversations per cell to the part
    of each cell that is in the stratum."""
    assumed = assumption if target.effect is None else assumption.at_effect(target.effect)
    if target.halfwidth is not None:
        units = units_for_halfwidth(assumed, target.halfwidth, confidence)
    else:
        assert target.power is not None
        units = units_for_power(assumed, target.power, target.alpha)
    first, second = cells
    if first == 0 or second == 0:
        raise ValueError(f"{contrast.name}: the design has no cell in one of its arms")
    power = predicted_power(assumed, units, target.alpha) if assumed.difference else None
    halfwidth = predicted_halfwidth(assumed, units, confidence)
    method, closed = "closed form", None
    if pilot is not None and target.effect is None:
        found = units_by_simulation(
            contrast,
            pilot,
            stratum,
            units,
            halfwidth=target.halfwidth,
            power=target.power,
            runs=runs,
            seed=seed,
            alpha=target.alpha,
        )
        if found.halfwidth is not None and found.power is not None:
            method, closed = "simulated", units
            units, halfwidth = found.n, found.halfwidth
            power = found.power if assumed.difference else None
    if min(shares) <= 0:
        raise ValueError(
            f"{contrast.name}: the stratum {dict(stratum)} has no conversation in an arm"
        )
    per_cell = max(math.ceil(units / (first * shares[0])), math.ceil(units / (second * shares[1])))
    return PlanRow(
        contrast=contrast.name,
        stratum=dict(stratum),
        assumption=assumed,
        units=units,
        cells_first=first,
        cells_second=second,
        per_cell=per_cell,
        halfwidth=halfwidth,
        power=power,
        method=method,
        closed_units=closed,
        shares=shares,
    )
