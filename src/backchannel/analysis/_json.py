"""JSON sanitising for `--json` and the metrics: one rule for frames, numpy values and NaN."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def finite_or_none(value: float) -> float | None:
    """A float for JSON: NaN and infinities become None."""
    number = float(value)
    return number if math.isfinite(number) else None


def jsonable(value: Any) -> Any:
    """Plain JSON values: frames become lists of records, mappings get string keys, tuples
    and arrays become lists, numpy scalars Python ones, and NaN, infinities and missing values
    become None (strict JSON has no NaN); typed results give their `--json` form."""
    from backchannel.analysis._typed import Metrics

    if isinstance(value, Metrics):
        return jsonable(value.as_json())
    if isinstance(value, pd.DataFrame):
        return [jsonable(record) for record in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return jsonable(value.to_dict())
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [jsonable(item) for item in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return finite_or_none(float(value))
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value
