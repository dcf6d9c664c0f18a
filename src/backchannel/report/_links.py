"""Links from a report's numbers to the viewer's list of the conversations behind them.

A table row or a figure point stands for one cell (or a part of one): its factor levels become
the viewer's URL filters (`#/run/0?f.k=1&f.model=%22m1%22`, docs/viewer.md), so a click opens
exactly the conversations it was computed from, in `backchannel view RUN` or a static copy.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

DEFAULT_VIEWER = "http://127.0.0.1:8765/"
"""Where `backchannel view RUN` serves by default."""


@dataclass(frozen=True, slots=True)
class ViewerLinks:
    """How a report addresses the viewer: its base (a URL, or a path relative to the report,
    such as a static copy's `index.html`), the run's position in it and the run's factors."""

    factors: tuple[str, ...]
    base: str = DEFAULT_VIEWER
    run: int = 0
    derived: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    """Columns that stand for factor levels (dyad's `pairing`: "a vs b" is a discussant and
    an opponent model): column -> value (as text) -> the levels it stands for."""

    def with_derived(self, column: str, levels: Mapping[str, Mapping[str, Any]]) -> ViewerLinks:
        """These links, knowing that `column`'s values stand for `levels`."""
        return replace(self, derived={**self.derived, column: dict(levels)})

    def knows(self, key: str) -> bool:
        """Whether `key` is a factor or a column standing for factor levels."""
        return key in self.factors or key in self.derived

    def cell_url(self, cell: Mapping[str, Any]) -> str | None:
        """The link of a cell given by factors and derived columns; None when a derived
        column holds a value it does not know (a link never lists the wrong conversations)."""
        levels: dict[str, Any] = {}
        for key, value in cell.items():
            if key in self.derived:
                stands = self.derived[key].get(str(value))
                if stands is None:
                    return None
                levels.update(stands)
            elif key in self.factors:
                levels[key] = value
        return self.url(levels)

    def url(self, cell: Mapping[str, Any]) -> str:
        """The viewer's list of the conversations at the levels `cell` gives the run's factors
        (its other keys are not filters: the caller decides whether they narrow the cell)."""
        filters = [
            f"f.{quote(factor, safe='')}={quote(_json(cell[factor]), safe='')}"
            for factor in self.factors
            if factor in cell
        ]
        query = "&".join(filters)
        return f"{self.base}#/run/{self.run}" + (f"?{query}" if query else "")

    def row_url(self, columns: Sequence[str], row: Sequence[Any]) -> str | None:
        """The link of a table row: its factor (and derived) columns' levels; None if it has
        none (which conversations it stands for is not known here)."""
        cell = {c: v for c, v in zip(columns, row, strict=True) if self.knows(c)}
        return self.cell_url(cell) if cell else None


def _json(value: Any) -> str:
    """A level as the viewer's JSON: numpy scalars as numbers, 2.0 as 2, text as a string."""
    if hasattr(value, "tolist") and not isinstance(value, list | tuple | dict | str):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        value = None  # a missing level, as a table holds it
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


def viewer_links(factors: Sequence[str], viewer: str | None, output: Path) -> ViewerLinks:
    """Links for a report written into `output`: to `viewer`, a URL (`http://host:port/`) or
    the path of a static copy's `index.html` (or its folder), which the links reach relative
    to the report so the two folders can move together; default `backchannel view`'s address."""
    if viewer is None:
        return ViewerLinks(tuple(factors))
    if "://" in viewer:
        return ViewerLinks(tuple(factors), viewer)
    target = Path(viewer)
    if target.is_dir() or not target.suffix:
        target = target / "index.html"
    relative = os.path.relpath(target.resolve(), Path(output).resolve())
    return ViewerLinks(tuple(factors), quote(Path(relative).as_posix()))
