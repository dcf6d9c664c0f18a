"""The headline contrasts a paradigm declares: two arms of its design, the outcome each unit
(conversation) gives, and how the difference between the arms is estimated.

One syntax for every paradigm: a contrast has a name (`fpi_gap`), two arms selected by levels
(`k=1` against `k=0`), an outcome kind (a proportion or a mean, independent or paired across
the arms) and a reader that gives each conversation's outcome. The estimate, its interval and
half-width come from the shared statistics here, so planning, precision stopping and the
metrics all read one number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables

Kind = Literal["proportion", "paired_proportion", "mean", "paired_mean"]
KINDS: tuple[Kind, ...] = ("proportion", "paired_proportion", "mean", "paired_mean")
PAIRED_KINDS: frozenset[str] = frozenset({"paired_proportion", "paired_mean"})
Unit = Literal["conversation"]

UNIT_COLUMNS = ("conversation_id", "value")
"""The columns a contrast's reader must return; `trials` (the agents a share is over, for a
clustered proportion) and any key its arms or strata name may follow."""

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
CONFIDENCE = 0.95


class Options(Protocol):
    """What a reader may take from the analysis options (`paradigms.AnalysisOptions`)."""

    @property
    def judge(self) -> str | None: ...


Reader = Callable[["RunTables", Options], "pd.DataFrame"]
"""A run's tables and the analysis options -> one row per conversation: `conversation_id`,
`value` (NaN when the conversation has no outcome), optionally `trials` and keys."""


@dataclass(frozen=True)
class Arm:
    """A selection of cells: the levels a conversation must have on the named keys (factors of
    the design, or keys the reader adds, such as testimony's `condition`)."""

    levels: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError("an arm selects cells by at least one level")

    def matches(self, cell: Mapping[str, Any]) -> bool:
        """Whether a cell (or a conversation's keys) has every level of this arm."""
        return all(key in cell and _same(cell[key], level) for key, level in self.levels.items())

    def label(self) -> str:
        """`k=1`, `condition=C0, intervention=none`."""
        return ", ".join(f"{k}={v}" for k, v in self.levels.items())


@dataclass(frozen=True)
class Contrast:
    """One headline contrast: `first` minus `second`, estimated within every stratum (level
    of the design's other factors and of `strata`), over conversations."""

    name: str
    """An identifier (`fpi_gap`): what `plan` prints and `run --until` names."""
    title: str
    """What the contrast measures, in a line."""
    first: Arm
    second: Arm
    kind: Kind
    reader: Reader = field(compare=False, repr=False)
    unit: Unit = "conversation"
    outcome: str = ""
    """What one conversation's value is, in words (for the plan's table and the docs)."""
    pooled: tuple[str, ...] = ()
    """Factors of the design an arm averages over (their cells are pooled inside an arm)."""
    strata: tuple[str, ...] = ()
    """Keys of the reader's rows (beyond the design's factors) that split the contrast."""
    pair_by: tuple[str, ...] = ("item_id", "replicate")
    """For paired kinds: what pairs a conversation of one arm with one of the other."""

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"contrast name {self.name!r}: use lowercase letters, digits and _")
        if self.kind not in KINDS:
            raise ValueError(f"contrast {self.name}: kind {self.kind!r} is not one of {KINDS}")
        if set(self.first.levels) != set(self.second.levels):
            raise ValueError(f"contrast {self.name}: both arms must select on the same keys")
        if self.first.levels == self.second.levels:
            raise ValueError(f"contrast {self.name}: the two arms select the same cells")

    @property
    def paired(self) -> bool:
        return self.kind in PAIRED_KINDS

    @property
    def proportion(self) -> bool:
        return self.kind in ("proportion", "paired_proportion")

    @property
    def arm_keys(self) -> tuple[str, ...]:
        return tuple(self.first.levels)

    def label(self) -> str:
        """`k=1 - k=0`."""
        return f"{self.first.label()} - {self.second.label()}"

    def stratum_keys(self, factors: tuple[str, ...] | list[str]) -> list[str]:
        """The keys a stratum has: the design's factors except the arms' keys and the pooled
        ones, then `strata`."""
        skip = set(self.arm_keys) | set(self.pooled)
        keys = [f for f in factors if f not in skip]
        return keys + [s for s in self.strata if s not in keys and s not in skip]


@dataclass(frozen=True)
class ArmSummary:
    """One arm in one stratum: its units with a value, their mean and standard deviation, the
    units without a value and, for a clustered proportion, the mean trials and intra-
    conversation correlation."""

    n: int
    mean: float | None
    sd: float | None
    missing: int = 0
    trials: float | None = None
    icc: float | None = None


@dataclass(frozen=True)
class ContrastEstimate:
    """The contrast in one stratum: `first - second`, its interval and half-width, the units
    per arm (pairs, for a paired kind) and why there is no estimate."""

    contrast: str
    stratum: dict[str, Any]
    estimate: float | None
    low: float | None
    high: float | None
    first: ArmSummary
    second: ArmSummary
    pairs: int | None = None
    """Paired kinds: units present in both arms; None for independent arms."""
    discordant: tuple[int, int] | None = None
    """Paired proportions: pairs with (first 1, second 0) and (first 0, second 1)."""
    sd_difference: float | None = None
    """Paired kinds: the standard deviation of the paired differences."""
    correlation: float | None = None
    """Paired kinds: the correlation of the two arms' values over pairs."""
    method: str = ""
    skipped: str | None = None

    @property
    def halfwidth(self) -> float | None:
        """Half the interval's width (None without an interval)."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    @property
    def n(self) -> int:
        """Units the estimate rests on: pairs, or the smaller arm."""
        return self.pairs if self.pairs is not None else min(self.first.n, self.second.n)

    def as_dict(self) -> dict[str, Any]:
        return {
            "contrast": self.contrast,
            "stratum": dict(self.stratum),
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "halfwidth": self.halfwidth,
            "n_first": self.first.n,
            "n_second": self.second.n,
            "pairs": self.pairs,
            "method": self.method,
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class ContrastReading:
    """A contrast read from one run: a row per stratum whose two arms both have conversations."""

    contrast: Contrast
    rows: tuple[ContrastEstimate, ...]

    @property
    def halfwidth(self) -> float | None:
        """The widest half-width over the strata (the contrast is as precise as its least
        precise stratum); None while any stratum has no interval."""
        widths = [row.halfwidth for row in self.rows]
        if not widths or any(w is None for w in widths):
            return None
        return max(w for w in widths if w is not None)

    @property
    def n(self) -> int:
        """The fewest units any stratum's estimate rests on (0 without a row)."""
        return min((row.n for row in self.rows), default=0)

    def value(self, field_name: str) -> float | None:
        """`halfwidth`, `n`, or (with one stratum) `estimate`, `low` or `high`: the names a
        stopping rule may test."""
        if field_name == "halfwidth":
            return self.halfwidth
        if field_name == "n":
            return float(self.n)
        if field_name in ("estimate", "low", "high"):
            if len(self.rows) != 1:
                return None
            found = getattr(self.rows[0], field_name)
            return None if found is None else float(found)
        raise KeyError(f"{field_name!r}: a contrast has halfwidth, n, estimate, low and high")


READING_FIELDS = ("halfwidth", "n", "estimate", "low", "high")


def _same(value: Any, level: Any) -> bool:
    """Levels compare as the design writes them (1 and 1.0 alike; text as text)."""
    if value is None or level is None:
        return value is level
    if isinstance(value, int | float) and isinstance(level, int | float):
        return float(value) == float(level)
    return str(value) == str(level)


def has_levels(levels: Mapping[str, Any], key: str, *wanted: Any) -> bool:
    """Whether the design's factor `key` has every one of `wanted` among its levels."""
    found = list(levels.get(key, ()) or ())
    return all(any(_same(level, w) for level in found) for w in wanted)
