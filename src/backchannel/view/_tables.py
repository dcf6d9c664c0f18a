"""The tidy tables of a few conversations, built from the rows the reader read, so a paradigm's
view computes their figures with the very functions its metrics use on the whole run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables


def _decoded_cell(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def tables_of(
    manifest: Mapping[str, Any],
    conversations: Iterable[Mapping[str, Any]],
    events: Iterable[Mapping[str, Any]],
    labels: Iterable[Mapping[str, Any]],
) -> RunTables:
    """RunTables as the run store builds them (factor columns from each cell, JSON text in
    `value` and `meta`), over the given rows; missing event columns are left empty."""
    run_id = str(manifest.get("run_id", ""))
    factors = [str(f) for f in manifest.get("factors", [])]
    rows = []
    for c in conversations:
        row = {column: c.get(column) for column in CONVERSATION_BASE_COLUMNS}
        row.update(run_id=run_id, paradigm=str(manifest.get("paradigm", "")))
        cell = _decoded_cell(c.get("cell"))
        row["cell"] = c["cell"] if isinstance(c.get("cell"), str) else json.dumps(cell)
        row["meta"] = c["meta"] if isinstance(c.get("meta"), str) else json.dumps(c.get("meta"))
        for factor in factors:
            row[factor] = cell.get(factor)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*CONVERSATION_BASE_COLUMNS, *factors])
    event_frame = pd.DataFrame([dict(e) for e in events], columns=EVENT_COLUMNS)
    event_frame["run_id"] = run_id
    event_frame["cached"] = event_frame["cached"].astype(object).fillna(False).astype(bool)
    event_frame["turn"] = event_frame["turn"].astype("Int64")
    for column in ("text", "reasoning", "model", "meta"):
        event_frame[column] = (
            event_frame[column]
            .astype(object)
            .where(event_frame[column].notna(), "" if column != "meta" else "{}")
        )
    label_frame = pd.DataFrame([dict(x) for x in labels], columns=LABEL_COLUMNS)
    label_frame["run_id"] = run_id
    return RunTables(event_frame, label_frame, frame, dict(manifest))
