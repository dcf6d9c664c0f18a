"""The tidy tables of a few conversations, built from the rows the reader read, so a paradigm's
view computes their figures with the very functions its metrics use on the whole run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

Rows: TypeAlias = "tuple[Sequence[str], Sequence[Sequence[Any]]] | Iterable[Mapping[str, Any]]"
"""Rows as (column names, tuples), as a query returns them, or as mappings."""


def _columns(rows: Rows, columns: Sequence[str]) -> dict[str, list[Any]]:
    """The rows as one list per wanted column (None where the rows lack the column)."""
    if isinstance(rows, tuple):
        names, values = rows
        by_name = dict(zip(names, zip(*values, strict=True), strict=False)) if values else {}
        size = len(values)
        return {c: list(by_name[c]) if c in by_name else [None] * size for c in columns}
    mappings = list(rows)
    return {c: [r.get(c) for r in mappings] for c in columns}


def _decoded_cell(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def tables_of(
    manifest: Mapping[str, Any], conversations: Rows, events: Rows, labels: Rows
) -> RunTables:
    """RunTables as the run store builds them (factor columns from each cell, JSON text in
    `value` and conversations' `meta`; an event's `meta` may be given decoded), over the given
    rows; missing event columns are left empty. Built column by column, in one step per table:
    a page's tables are small, and pandas' cost is per operation."""
    import pandas as pd

    from backchannel.analysis import (
        CONVERSATION_BASE_COLUMNS,
        EVENT_COLUMNS,
        LABEL_COLUMNS,
        RunTables,
    )

    run_id = str(manifest.get("run_id", ""))
    factors = [str(f) for f in manifest.get("factors", [])]
    found = _columns(conversations, CONVERSATION_BASE_COLUMNS)
    size = len(found["conversation_id"])
    cells = [_decoded_cell(c) for c in found["cell"]]
    found["run_id"] = [run_id] * size
    found["paradigm"] = [str(manifest.get("paradigm", ""))] * size
    found["cell"] = [t if isinstance(t, str) else json.dumps(c)
                     for c, t in zip(cells, found["cell"], strict=True)]  # fmt: skip
    found["meta"] = [m if isinstance(m, str) else json.dumps(m) for m in found["meta"]]
    for factor in factors:
        found[factor] = [c.get(factor) for c in cells]
    frame = pd.DataFrame(found, columns=[*CONVERSATION_BASE_COLUMNS, *factors])
    columns = _columns(events, EVENT_COLUMNS)
    size = len(columns["conversation_id"])
    columns["run_id"] = [run_id] * size
    columns["cached"] = [bool(c) for c in columns["cached"]]
    columns["turn"] = pd.array(columns["turn"], dtype="Int64")  # type: ignore[assignment]
    for name in ("text", "reasoning", "model"):
        columns[name] = ["" if v is None else v for v in columns[name]]
    columns["meta"] = ["{}" if v is None else v for v in columns["meta"]]
    event_frame = pd.DataFrame(columns, columns=EVENT_COLUMNS)
    label_columns = _columns(labels, LABEL_COLUMNS)
    label_columns["run_id"] = [run_id] * len(label_columns["conversation_id"])
    label_frame = pd.DataFrame(label_columns, columns=LABEL_COLUMNS)
    return RunTables(event_frame, label_frame, frame, dict(manifest))
