"""How numbers look in a report: one rule per column, so a column reads consistently.

- Columns named like a proportion (`*_rate`, `*_share`, and their `*_low` / `*_high` bounds)
  whose values all lie in [0, 1] are shown as percentages with one decimal: 0.125 -> "12.5%".
- Float columns whose values are all whole numbers are shown as integers: 12.0 -> "12".
- Other floats get three decimals (0.41237 -> "0.412"); magnitudes below 0.001 or from 1e6 up
  use three significant digits in scientific notation (0.0000213 -> "2.13e-05").
- Missing values (None, NaN) are shown as an en dash. Booleans as "yes" / "no".
CSV files keep the raw values; only the HTML is formatted.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

MISSING = "–"
_PROPORTION_NAME = re.compile(r"(^|_)(rate|share)(_(low|high))?$")


def is_proportion_name(name: object) -> bool:
    """True for names like `flip_rate`, `adversary_share`, `flip_rate_low`."""
    return bool(_PROPORTION_NAME.search(str(name)))


def is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def format_float(value: float) -> str:
    """Three decimals in the everyday range, three significant digits outside it."""
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        return f"{value:.3f}"
    return f"{value:.3g}"


def format_percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def format_scalar(value: object, name: object = "") -> str:
    """Format one value on its own (used for metrics); `name` enables the percentage rule."""
    if is_missing(value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if is_proportion_name(name) and 0 <= number <= 1:
            return format_percent(number)
        if number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return format_float(number)
    return str(value)


def column_formatter(name: object, values: Iterable[Any]) -> Callable[[object], str]:
    """Choose one formatter for a whole column from its name and its non-missing values."""
    present = [v for v in values if not is_missing(v)]
    is_real = all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present
    ) and bool(present)
    if not is_real:
        return lambda v: format_scalar(v)
    floats = [float(v) for v in present]
    if is_proportion_name(name) and all(0 <= v <= 1 for v in floats):
        return lambda v: MISSING if is_missing(v) else format_percent(float(v))  # type: ignore[arg-type]
    if all(v.is_integer() and abs(v) < 1e15 for v in floats):
        return lambda v: MISSING if is_missing(v) else str(int(float(v)))  # type: ignore[arg-type]
    return lambda v: MISSING if is_missing(v) else format_float(float(v))  # type: ignore[arg-type]


def is_numeric_column(values: Iterable[Any]) -> bool:
    """Numeric columns are right-aligned."""
    present = [v for v in values if not is_missing(v)]
    return bool(present) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present
    )
