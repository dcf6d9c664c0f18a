"""texts_in answers as `values.astype(str).isin(wanted)` does, on every kind of column a run's
frames hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from backchannel.analysis import texts_in

COLUMNS = {
    "arrow text with a missing value": pd.Series(["c1", None, "c3", "c2", "c1"], dtype="str"),
    "object with None": pd.Series(["c1", None, "c3", "c2", "c1"], dtype=object),
    "integers": pd.Series([1, 2, 3, 2]),
    "index": pd.Index(["c2", "c9", "c1"]),
    "empty": pd.Series([], dtype="str"),
}
WANTED = {
    "set": {"c1", "c2", "2"},
    "dict keys": {"c3": 1, "2": 0},
    "list with non-text": ["c1", 2, None, "3"],
    "series": pd.Series(["c2", None, "c3"], dtype="str"),
    "nothing": set(),
}


@pytest.mark.parametrize("column", COLUMNS)
@pytest.mark.parametrize("wanted", WANTED)
def test_texts_in_matches_isin_of_the_text(column: str, wanted: str) -> None:
    values, wanted_values = COLUMNS[column], WANTED[wanted]
    texts = values.astype(str)
    expected = texts.isin(
        [w for w in wanted_values if isinstance(w, str)]
        if not isinstance(wanted_values, pd.Series)
        else wanted_values.dropna()
    )
    expected = np.asarray(expected, dtype=bool) & np.asarray(pd.notna(texts), dtype=bool)
    found = texts_in(values, wanted_values)
    assert found.dtype == bool
    assert found.tolist() == expected.tolist()


def test_a_hand_checked_case() -> None:
    values = pd.Series(["a", None, "b", "a"], dtype="str")
    assert texts_in(values, {"a"}).tolist() == [True, False, False, True]
    assert texts_in(pd.Series([7, 8]), ["8", 8]).tolist() == [False, True]
