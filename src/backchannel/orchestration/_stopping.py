"""The precision stopping rule of `run --until`: the target (`NAME.halfwidth<=X and ...`), the
batches a run adds replicates in, and the decision after each look.

A run stops when every named headline contrast's interval is narrow enough, or at the design's
ceiling (its `replicates`); never on an estimate or a p-value, so the syntax names only
half-widths (docs/statistics.md, "Stopping on precision").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backchannel.errors import ConfigError

_CONDITION = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\.(?P<field>[A-Za-z_]+)\s*(?P<op><=|<)\s*"
    r"(?P<value>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$"
)
_AND = re.compile(r"\s+and\s+")
SYNTAX = "NAME.halfwidth<=X, joined by `and` (e.g. fpi_gap.halfwidth<=0.05)"
STOP_TARGET, STOP_CEILING = "target", "ceiling"


@dataclass(frozen=True)
class Condition:
    """One contrast's interval half-width at most (or below) a bound."""

    contrast: str
    bound: float
    strict: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.bound) and self.bound > 0):
            raise ConfigError(
                f"--until: the half-width bound of {self.contrast} must be a positive number, "
                f"not {self.bound}"
            )

    def holds(self, halfwidth: float | None) -> bool:
        if halfwidth is None or not math.isfinite(halfwidth):
            return False
        return halfwidth < self.bound if self.strict else halfwidth <= self.bound

    def __str__(self) -> str:
        return f"{self.contrast}.halfwidth{'<' if self.strict else '<='}{self.bound:g}"


@dataclass(frozen=True)
class Target:
    """Every condition must hold (`and`); the text as given is kept for the manifest."""

    conditions: tuple[Condition, ...]

    @property
    def contrasts(self) -> list[str]:
        return list(dict.fromkeys(c.contrast for c in self.conditions))

    def __str__(self) -> str:
        return " and ".join(str(c) for c in self.conditions)

    def check(self, available: Iterable[str], paradigm: str) -> None:
        """Refuse a contrast the paradigm does not declare, naming the ones it has."""
        names = list(available)
        unknown = [c for c in self.contrasts if c not in names]
        if unknown:
            have = ", ".join(names) if names else "none"
            raise ConfigError(
                f"--until names {', '.join(unknown)}, which {paradigm} does not declare; its "
                f"headline contrasts are: {have}"
            )

    def holds(self, readings: Mapping[str, Reading]) -> bool:
        return all(
            c.contrast in readings and c.holds(readings[c.contrast].halfwidth)
            for c in self.conditions
        )


def parse_target(text: str) -> Target:
    """`fpi_gap.halfwidth<=0.05 and other.halfwidth<0.1`; anything else is one ConfigError."""
    if not text.strip():
        raise ConfigError(f"--until is empty; write {SYNTAX}")
    conditions = []
    for part in _AND.split(text.strip()):
        match = _CONDITION.match(part)
        if match is None:
            raise ConfigError(f"--until: cannot read {part.strip()!r}; write {SYNTAX}")
        if match["field"] != "halfwidth":
            raise ConfigError(
                f"--until: {part.strip()!r} stops on {match['field']}; a run stops on precision "
                f"only (stopping on an estimate or a p-value biases it): write {SYNTAX}"
            )
        conditions.append(
            Condition(match["name"], float(match["value"]), strict=match["op"] == "<")
        )
    return Target(tuple(conditions))


@dataclass(frozen=True)
class Reading:
    """One contrast at one look: its estimate, 95 % interval half-width and observations; None
    with a reason when it cannot be computed yet. A contrast estimated within several strata
    (levels of the design's other factors) has the widest stratum's half-width, the fewest
    units, an estimate only with one stratum, and each stratum's row in `strata`."""

    estimate: float | None
    halfwidth: float | None
    n: int
    skipped: str | None = None
    strata: tuple[Mapping[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "estimate": _finite(self.estimate),
            "halfwidth": _finite(self.halfwidth),
            "n": self.n,
            "skipped": self.skipped,
        }
        if len(self.strata) > 1:
            found["strata"] = [dict(row) for row in self.strata]
        return found


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def batch_ends(ceiling: int, batch: int, first: int | None = None) -> list[int]:
    """The replicate counts after each batch: `first` (default `batch`), then `batch` more at a
    time, the last capped at `ceiling`. Every cell and item gains the same replicates per batch
    (a cell with fewer replicates stops gaining at its own ceiling)."""
    if batch < 1 or ceiling < 1:
        raise ConfigError("stopping: batch and replicates must be at least 1")
    start = min(first if first is not None else batch, ceiling)
    ends = [start]
    while ends[-1] < ceiling:
        ends.append(min(ends[-1] + batch, ceiling))
    return ends


def default_batch(ceiling: int) -> int:
    """A tenth of the ceiling (at least one replicate): about ten looks at most."""
    return max(1, math.ceil(ceiling / 10))


@dataclass(frozen=True)
class Look:
    """What one look saw: after `replicates` replicates per cell and item, the calls so far,
    each contrast's reading, and whether the run stops here (and why)."""

    index: int
    replicates: int
    conversations: int
    calls: int
    readings: Mapping[str, Reading]
    stop: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "look": self.index,
            "replicates": self.replicates,
            "conversations": self.conversations,
            "calls": self.calls,
            "contrasts": {name: r.as_dict() for name, r in self.readings.items()},
            "stop": self.stop,
        }


def decide(
    target: Target, readings: Mapping[str, Reading], replicates: int, ceiling: int
) -> str | None:
    """`target` when every condition holds, `ceiling` when the design is used up, else None
    (run the next batch). The target wins at the ceiling when both are true."""
    if target.holds(readings):
        return STOP_TARGET
    if replicates >= ceiling:
        return STOP_CEILING
    return None


def stop_reason(look: Mapping[str, Any], target: str) -> str:
    """One line for `status` and the run's summary: why a run stopped at a look."""
    at = f"after {look['replicates']} replicates ({look['conversations']} conversations)"
    if look.get("stop") == STOP_TARGET:
        return f"stopped {at}: {target} holds"
    if look.get("stop") == STOP_CEILING:
        return f"stopped {at}: the design's ceiling was reached before {target} held"
    return f"running: last look {at}; {target} does not hold yet"


def describe_reading(name: str, reading: Mapping[str, Any]) -> str:
    """`fpi_gap 0.183 ± 0.049 (n 120)` (over strata: the widest half-width), or why it has no
    value yet."""
    estimate, halfwidth = reading.get("estimate"), reading.get("halfwidth")
    strata = reading.get("strata") or []
    if halfwidth is None:
        return f"{name} not computable yet ({reading.get('skipped') or 'no interval'})"
    if estimate is None and strata:
        return (
            f"{name} ± {halfwidth:.3f} at widest over {len(strata)} strata (n {reading.get('n')})"
        )
    if estimate is None:
        return f"{name} not computable yet ({reading.get('skipped') or 'no estimate'})"
    return f"{name} {estimate:.3f} ± {halfwidth:.3f} (n {reading.get('n')})"


def describe_looks(looks: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per look: replicates, calls and every contrast's reading."""
    lines = []
    for look in looks:
        readings = "; ".join(
            describe_reading(name, r) for name, r in (look.get("contrasts") or {}).items()
        )
        lines.append(
            f"look {look['look'] + 1}: {look['replicates']} replicates, "
            f"{look['conversations']} conversations, {look['calls']} calls: {readings}"
        )
    return lines
