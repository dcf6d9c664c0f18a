"""Model text made safe to show: bidi and control characters made visible (a right-to-left
override would reverse a heading), and CSV cells kept from running as spreadsheet formulas.

Parquet exports and the run store keep the exact text; only HTML and CSV are neutralised.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

# C0 controls but tab, line feed and carriage return; DEL; C1 controls; the bidi embeddings,
# overrides, isolates and marks; the Arabic letter mark; line and paragraph separators.
_CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c\u2028\u2029]"
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
CSV_ESCAPE = "'"
"""Prefixed to a CSV text cell that starts like a formula (or with this mark itself)."""


def visible_controls(text: str) -> str:
    """Each bidi or control character replaced by a visible `<U+XXXX>`; other text unchanged."""
    return _CONTROLS.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def csv_cell(value: Any) -> Any:
    """A text cell for CSV: controls made visible, and a cell starting with = + - @ (a formula
    to a spreadsheet), a tab, a carriage return or the escape mark itself prefixed with `'`.
    Values other than text are returned as they are."""
    if not isinstance(value, str):
        return value
    value = visible_controls(value)
    return CSV_ESCAPE + value if value.startswith(_FORMULA_START) else value


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with `csv_cell` applied to every text column (numbers stay numbers)."""
    text = [
        c
        for c in frame.columns
        if frame[c].dtype == object
        or pd.api.types.is_string_dtype(frame[c])
        or isinstance(frame[c].dtype, pd.CategoricalDtype)
    ]
    if not text:
        return frame
    return frame.assign(**{str(c): frame[c].map(csv_cell) for c in text})


def from_csv_cell(value: Any) -> Any:
    """Undo the formula escape of `csv_cell` (the control characters stay visible)."""
    if isinstance(value, str) and value.startswith(CSV_ESCAPE):
        return value[1:]
    return value
