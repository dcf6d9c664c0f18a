"""The run's headline metrics (what `backchannel metrics` prints), from a read-only connection.

This is the one viewer call that reads every event (the paradigm's metrics are run-level), so
the front end asks for it separately and the pages never wait on it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

import pandas as pd

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, RunTables
from backchannel.errors import ConfigError


def read_tables(db: sqlite3.Connection, manifest: dict[str, Any], run_id: str) -> RunTables:
    """The run's tidy tables, shaped exactly as the run store's `tables()` shapes them."""
    conversations = pd.read_sql_query(
        "SELECT conversation_id, cell_key, cell, item_id, replicate, seed, status, error, meta "
        "FROM conversations ORDER BY position",
        db,
    )
    conversations.insert(0, "run_id", run_id)
    conversations.insert(2, "paradigm", manifest.get("paradigm", ""))
    factors = [str(f) for f in manifest.get("factors", [])]
    cells = conversations["cell"].map(json.loads)
    for factor in factors:
        conversations[factor] = cells.map(lambda c, f=factor: c.get(f))
    conversations = conversations[[*CONVERSATION_BASE_COLUMNS, *factors]]
    order = {cid: i for i, cid in enumerate(conversations["conversation_id"])}
    events = pd.read_sql_query("SELECT * FROM events", db)
    events.insert(0, "run_id", run_id)
    events = events[EVENT_COLUMNS]
    events["cached"] = events["cached"].astype(bool)
    events["turn"] = events["turn"].astype("Int64")
    events = _ordered(events, order, "seq")
    labels = pd.read_sql_query("SELECT * FROM labels", db)
    labels.insert(0, "run_id", run_id)
    labels = _ordered(labels, order, "event_seq", "judge")
    return RunTables(events, labels, conversations, manifest)


def _ordered(frame: pd.DataFrame, order: dict[str, int], *keys: str) -> pd.DataFrame:
    position = frame["conversation_id"].map(order).fillna(len(order))
    return (
        frame.assign(_position=position)
        .sort_values(["_position", *keys], kind="stable")
        .drop(columns="_position")
        .reset_index(drop=True)
    )


def headline_metrics(tables: RunTables) -> dict[str, Any]:
    """{"metrics": ...} from the paradigm, or {"error": why} when they cannot be computed."""
    from backchannel.paradigms import AnalysisOptions, get_paradigm

    name = str(tables.manifest.get("paradigm", ""))
    try:
        paradigm = get_paradigm(name)
    except ConfigError as error:
        return {"error": str(error)}
    if not (tables.conversations["status"] == "done").any():
        return {"error": "no conversation is done yet, so there are no metrics"}
    try:
        metrics = paradigm.metrics(tables, AnalysisOptions())
    except Exception as error:  # the page shows why instead of failing
        return {"error": f"the metrics cannot be computed: {type(error).__name__}: {error}"}
    return {"metrics": finite(json.loads(json.dumps(metrics, default=str)))}


def finite(value: Any) -> Any:
    """The same structure with NaN and infinities as null (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value
