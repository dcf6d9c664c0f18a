"""The row types of typed results: per-cell rows, nested records and intervals.

A per-cell row (`CellRow`) carries typed measures and the cell's factor levels as its other
keys; a `Record` is a nested part that is not per cell. `Metrics` (analysis/_typed.py) is
built from these; kit sections build on them too, so they live apart from it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)

FACTORS_CONTEXT = "factors"
"""The validation-context key that lists the run's declared factors (and other row keys)."""


class CellRow(BaseModel):
    """One row of a per-cell table: typed measures, and the cell's factor levels as the other
    keys (serialised first, as a tidy table reads: factors, then measures)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    keys: ClassVar[tuple[str, ...]] = ()
    """Row keys besides the factors that a subclass allows undeclared (e.g. `checkpoint`)."""
    omit_unset: ClassVar[bool] = False
    """If true, an optional field the row was built without is left out of its JSON (a part
    that only some rows have), instead of printed as null."""

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
        ordered = {**{k: fields[k] for k in extra if k in fields}, **fields}
        return _given(self, ordered) if type(self).omit_unset else ordered

    @property
    def cell(self) -> dict[str, Any]:
        """The factor levels of this row."""
        return dict(self.model_extra or {})


class Record(BaseModel):
    """A nested part of typed results that is not a per-cell row (an interval, a test, a
    fitted model): frozen, no undeclared keys, and an optional field it was built without is
    left out of its JSON (a fit that was skipped has no coefficients, rather than null ones)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="wrap")
    def _only_given(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        return _given(self, handler(self))


class IntervalRecord(Record):
    """An estimate with its 95 % interval over `n` units, as typed results carry it (the
    fields of `Interval.as_dict()`): `skipped` says why there is none, `missing` counts the
    units without a value."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    skipped: str | None
    missing: int


def _given(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the optional fields `model` was built without."""
    unset: set[str] = set()
    for name, field in type(model).model_fields.items():
        if not field.is_required() and name not in model.model_fields_set:
            unset |= {name, field.serialization_alias or field.alias or name}
    return {k: v for k, v in data.items() if k not in unset}
