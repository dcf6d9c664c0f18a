"""One factor rule for every paradigm: a cell's levels override the settings of the same names and
are validated by the paradigm's Settings model, so a bad level is one config error naming the
factor, the level and what is allowed."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from backchannel.errors import ConfigError

S = TypeVar("S", bound=BaseModel)


def allowed_values(field: FieldInfo) -> str:
    """What a setting accepts, in words: its literal values, or its type and bounds."""
    annotation = field.annotation
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    optional = origin in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        inner = [a for a in args if a is not type(None)]
        annotation = inner[0] if len(inner) == 1 else annotation
        origin = typing.get_origin(annotation)
    if origin is Literal:
        text = ", ".join(repr(v) for v in typing.get_args(annotation))
        return f"one of {text}" + (" or null" if optional else "")
    names: dict[Any, str] = {
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        str: "a string",
    }
    kind = names.get(annotation) or str(getattr(annotation, "__name__", annotation))
    bounds = []
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            bounds.append(f">= {rule.ge}")
        elif isinstance(rule, annotated_types.Gt):
            bounds.append(f"> {rule.gt}")
        elif isinstance(rule, annotated_types.Le):
            bounds.append(f"<= {rule.le}")
        elif isinstance(rule, annotated_types.Lt):
            bounds.append(f"< {rule.lt}")
    text = kind + (f" {' and '.join(bounds)}" if bounds else "")
    return text + (" or null" if optional else "")


def check_factor_names(
    paradigm: str,
    names: Iterable[str],
    factors: frozenset[str],
    fixed: frozenset[str],
    *,
    labels: bool,
) -> None:
    """Refuse factor names the paradigm cannot vary; with `labels`, other names are cell labels
    unless they name a fixed setting or look like a misspelling of a factor."""
    for name in names:
        if name in factors:
            continue
        if name in fixed:
            raise ConfigError(
                f"factors.{name}: {name} does not vary by cell in the {paradigm} paradigm; set it "
                f"under settings: (its factors are {', '.join(sorted(factors))})"
            )
        close = difflib.get_close_matches(name, sorted(factors), n=1, cutoff=0.7)
        if labels and not close:
            continue
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"factors.{name}: the {paradigm} paradigm does not read a factor of this name; "
            f"{hint}its factors are {', '.join(sorted(factors))}"
        )


def resolve_cell(settings: S, cell: Mapping[str, Any], factors: frozenset[str]) -> S:
    """The settings one cell runs with: each factor's level replaces the setting of its name, and
    the whole is validated again (so cross-field rules such as k < n_agents hold per cell)."""
    varying = {name: level for name, level in cell.items() if name in factors}
    if not varying:
        return settings
    model = type(settings)
    try:
        return model.model_validate({**settings.model_dump(), **varying})
    except ValidationError as error:
        problem = error.errors()[0]
        location = problem["loc"]
        name = str(location[0]) if location else ""
        message = str(problem["msg"]).removeprefix("Value error, ")
        if name in varying:
            allowed = allowed_values(model.model_fields[name])
            raise ConfigError(
                f"factors.{name}: level {varying[name]!r} is not allowed ({message}); "
                f"{name} takes {allowed}"
            ) from None
        levels = ", ".join(f"{k}={v!r}" for k, v in varying.items())
        raise ConfigError(f"factors: the cell {levels} cannot run: {message}") from None
