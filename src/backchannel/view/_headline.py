"""The run's headline metrics (what `backchannel metrics` prints), from the tables of a run store
opened read-only.

This is the one viewer call that reads every event (the paradigm's metrics are run-level), so
the front end asks for it separately and the pages never wait on it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from backchannel.analysis import RunTables, jsonable
from backchannel.errors import ConfigError


def headline_metrics(tables: RunTables) -> dict[str, Any]:
    """{"metrics": ...} from the paradigm, or {"error": why} when they cannot be computed."""
    from backchannel.paradigms import AnalysisOptions, get_paradigm, with_kit_sections

    name = str(tables.manifest.get("paradigm", ""))
    try:
        paradigm = get_paradigm(name)
    except ConfigError as error:
        return {"error": str(error)}
    if not (tables.conversations["status"] == "done").any():
        return {"error": "no conversation is done yet, so there are no metrics"}
    try:
        options = AnalysisOptions()
        with tables.reuse():
            metrics = with_kit_sections(
                paradigm, tables, options, paradigm.metrics(tables, options)
            )
    except Exception as error:  # the page shows why instead of failing
        return {"error": f"the metrics cannot be computed: {type(error).__name__}: {error}"}
    return {"metrics": finite(json.loads(json.dumps(jsonable(metrics), default=str)))}


def finite(value: Any) -> Any:
    """The same structure with NaN and infinities as null (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value
