"""Membership of text columns in a set of texts, asked of Arrow directly.

`Series.isin` on pandas' Arrow-backed text builds a pyarrow scalar for every wanted value: with
100,000 conversation ids that is about a second per call (bench/RESULTS.md, section (k)).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


def texts_in(values: pd.Series | pd.Index, wanted: Iterable[object]) -> np.ndarray:
    """Whether each value, as text, is one of the texts in `wanted` (values that are not text
    in `wanted` are ignored; a missing value is in none): `values.astype(str).isin(wanted)`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = pa.array(values.astype(str))
    if texts.type not in (pa.string(), pa.large_string()):
        texts = texts.cast(pa.large_string())
    if isinstance(wanted, pd.Series | pd.Index):
        value_set = pc.drop_null(pa.array(wanted.astype(str))).cast(texts.type)
    else:
        value_set = pa.array([w for w in wanted if isinstance(w, str)], type=texts.type)
    found = pc.is_in(texts, value_set=value_set, skip_nulls=True).fill_null(False)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
