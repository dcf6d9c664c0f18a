"""Bidi and control characters made visible; CSV cells that a spreadsheet would run as a
formula escaped, and the escape undone when the tables are read back."""

from __future__ import annotations

import pandas as pd
import pytest

from backchannel._safe_text import csv_cell, csv_frame, from_csv_cell, visible_controls


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("abc\u202edcba", "abc<U+202E>dcba"),  # right-to-left override
        ("\u2066isolate\u2069", "<U+2066>isolate<U+2069>"),
        ("mark\u200f", "mark<U+200F>"),
        ("nul\x00bell\x07", "nul<U+0000>bell<U+0007>"),
        ("esc\x1b[31mred", "esc<U+001B>[31mred"),
        ("del\x7f c1\x85", "del<U+007F> c1<U+0085>"),
        ("line\u2028sep", "line<U+2028>sep"),
        ("tabs\tand\nlines\r\n stay", "tabs\tand\nlines\r\n stay"),
        ("ordinary text, émigré, 東京", "ordinary text, émigré, 東京"),
    ],
)
def test_controls_become_visible(text: str, shown: str) -> None:
    assert visible_controls(text) == shown


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+2", "'+1+2"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tlead", "'\tlead"),
        ("'quoted", "''quoted"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        (-3, -3),
        (None, None),
    ],
)
def test_csv_cells_that_start_like_formulas_are_escaped_and_read_back(
    value: object, cell: object
) -> None:
    assert csv_cell(value) == cell
    assert from_csv_cell(cell) == value


def test_csv_frame_touches_text_columns_only() -> None:
    frame = pd.DataFrame({"text": ["=1+1", "ok"], "n": [-1, 2]})
    escaped = csv_frame(frame)
    assert escaped["text"].tolist() == ["'=1+1", "ok"]
    assert escaped["n"].tolist() == [-1, 2]
    assert frame["text"].tolist() == ["=1+1", "ok"]  # the input is not changed


def test_csv_frame_escapes_categorical_text_columns() -> None:
    """The store keeps names (an agent, a model) as categoricals: escaped all the same."""
    frame = pd.DataFrame({"agent": pd.Categorical(["=cmd|x", "alice", "=cmd|x", None])})
    escaped = csv_frame(frame)
    assert escaped["agent"].astype("str").tolist()[:3] == ["'=cmd|x", "alice", "'=cmd|x"]
    assert escaped["agent"].isna().tolist() == [False, False, False, True]
