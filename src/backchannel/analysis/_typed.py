"""Typed results: the models a paradigm's metrics are validated into, and the design's cells.

A paradigm builds its figures as before (frames, records) and returns them as a `Metrics`
subclass whose fields are typed; the report, the `metrics` tables, the viewer and `--json` all
read that one model. Rows of a per-cell table are `CellRow`s: their declared fields are the
measures, every other key is one of the run's declared factors (checked when validated), so a
factor can never hide in a row, and a row can never carry a key nobody declared.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis._headline import Headline
    from backchannel.analysis._tables import RunTables

FACTORS_CONTEXT = "factors"
"""The validation-context key that lists the run's declared factors (and other row keys)."""

M = TypeVar("M", bound="Metrics")


@dataclass(frozen=True, slots=True)
class Design:
    """The run's declared factors, in the experiment's order: the one source of a run's cells.

    Metrics group by these, never by a list a paradigm keeps by hand; a section that averages
    over one of them names it (`pooled`), so nothing is pooled silently.
    """

    factors: tuple[str, ...]

    @classmethod
    def of(cls, tables: RunTables) -> Design:
        """The factors the run declared that its conversations carry as columns."""
        columns = set(tables.conversations.columns)
        return cls(tuple(f for f in tables.factors if f in columns))

    def by(self, *, pooled: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
        """Grouping columns: every factor except the `pooled` ones, then `extra` keys."""
        unknown = [p for p in pooled if p not in self.factors and p not in extra]
        if unknown:
            raise ValueError(f"pooled names {unknown} that are not factors of the run")
        return [f for f in self.factors if f not in pooled] + [e for e in extra if e not in pooled]

    def pooled(self, names: Sequence[str]) -> list[str]:
        """Those of `names` that are factors of this run (what a section averages over)."""
        return [f for f in self.factors if f in names]


class CellRow(BaseModel):
    """One row of a per-cell table: typed measures, and the cell's factor levels as the other
    keys (serialised first, as a tidy table reads: factors, then measures)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    keys: ClassVar[tuple[str, ...]] = ()
    """Row keys besides the factors that a subclass allows undeclared (e.g. `checkpoint`)."""

    @model_validator(mode="after")
    def _only_factors(self, info: ValidationInfo) -> CellRow:
        allowed = (info.context or {}).get(FACTORS_CONTEXT)
        if allowed is None:
            return self
        unknown = sorted(set(self.model_extra or {}) - set(allowed) - set(self.keys))
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has keys {unknown} that are neither its fields nor "
                "factors of the run"
            )
        return self

    @model_serializer(mode="wrap")
    def _factors_first(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        fields = handler(self)
        extra = self.model_extra or {}
        return {**{k: fields[k] for k in extra if k in fields}, **fields}

    @property
    def cell(self) -> dict[str, Any]:
        """The factor levels of this row."""
        return dict(self.model_extra or {})


class Metrics(BaseModel):
    """Base of a paradigm's typed results. Subclasses declare their sections as fields, in the
    order `--json` prints them.

    Every list of `CellRow`s (at any depth) must carry every factor of the run, except those its
    path names in `pooled` (a section that averages over a factor by design says so there); a
    field listed in `run_level` holds whole-run figures that are not per cell by nature
    (failure counts, judge agreement). `separation_problems` checks both.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    run_level: ClassVar[frozenset[str]] = frozenset()
    """Fields that are whole-run by nature: counts, options, agreement between judges."""

    pooled: dict[str, list[str]] = Field(default_factory=dict)
    """Section path (e.g. `network.infection_by_model`) -> the factors it averages over."""

    @classmethod
    def build(cls: type[M], data: Mapping[str, Any], design: Design | Sequence[str]) -> M:
        """Validate JSON-able figures (as `analysis.jsonable` gives them) into the model;
        rows may carry the design's factors and nothing undeclared."""
        factors = design.factors if isinstance(design, Design) else tuple(design)
        return cls.model_validate(data, context={FACTORS_CONTEXT: factors})

    def as_json(self) -> dict[str, Any]:
        """What `backchannel metrics RUN --json` prints (`pooled` only when something is)."""
        data = self.model_dump(mode="json")
        if not data.get("pooled"):
            data.pop("pooled", None)
        return data

    def headline(self) -> Headline | None:
        """The table these results lead with, in the study's layout (None: no headline)."""
        return None

    def sections(self) -> Iterator[tuple[str, Any]]:
        """(name, value) of every section field, in order."""
        for name in type(self).model_fields:
            if name != "pooled":
                yield name, getattr(self, name)


def separation_problems(metrics: Metrics, design: Design | Sequence[str]) -> list[str]:
    """Where `metrics` averages over a factor without saying so: a per-cell row lacking a factor
    its section does not declare pooled, or a figure outside any per-cell table in a field not
    declared whole-run. Empty when every factor is separated or named."""
    factors = design.factors if isinstance(design, Design) else tuple(design)
    problems: list[str] = []
    for name, value in metrics.sections():
        if name in type(metrics).run_level:
            continue
        _walk(value, name, factors, metrics.pooled, problems)
    return problems


def _walk(
    value: Any,
    path: str,
    factors: Sequence[str],
    pooled: Mapping[str, Sequence[str]],
    out: list[str],
) -> None:
    if isinstance(value, CellRow):
        named = set(pooled.get(_section_of(path, pooled), ()))
        missing = [f for f in factors if f not in value.cell and f not in named]
        if missing:
            out.append(f"{path}: a row without the factor(s) {', '.join(missing)}")
        return
    if isinstance(value, BaseModel):
        for field in type(value).model_fields:
            _walk(getattr(value, field), f"{path}.{field}", factors, pooled, out)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _walk(item, f"{path}.{key}", factors, pooled, out)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(
                item,
                f"{path}[{index}]" if not isinstance(item, CellRow) else path,
                factors,
                pooled,
                out,
            )
        return
    named = set(pooled.get(_section_of(path, pooled), ()))
    if value is not None and not isinstance(value, str | bool) and not set(factors) <= named:
        out.append(f"{path}: a figure for the whole run, outside any per-cell table")


def _section_of(path: str, pooled: Mapping[str, Sequence[str]]) -> str:
    """The longest declared section path that `path` lies in (or `path` itself)."""
    inside = [d for d in pooled if path == d or path.startswith((d + ".", d + "["))]
    return max(inside, key=len, default=path)


def rows_frame(rows: Sequence[BaseModel]) -> pd.DataFrame:
    """Typed rows as a tidy frame (factors first), for figures and tables."""
    import pandas as pd

    return pd.DataFrame([row.model_dump(mode="json") for row in rows])
