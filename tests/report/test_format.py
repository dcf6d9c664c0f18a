"""Number formatting rules for report tables and metrics."""

import math

import pytest

from backchannel.report import format_scalar, is_proportion_name
from backchannel.report._format import MISSING, column_formatter, is_numeric_column


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("flip_rate", True),
        ("adversary_share", True),
        ("flip_rate_low", True),
        ("flip_rate_high", True),
        ("rate", True),
        ("moderate", False),  # "rate" must be a whole word of the name
        ("rate_limit_hits", False),
        ("share_count", False),
    ],
)
def test_proportion_names(name: str, expected: bool) -> None:
    assert is_proportion_name(name) is expected


@pytest.mark.parametrize(
    ("value", "name", "expected"),
    [
        (0.41237, "effect", "0.412"),  # three decimals
        (12.34567, "latency_s", "12.346"),
        (0.0000213, "p_value", "2.13e-05"),  # below 0.001 -> three significant digits
        (2_512_345.6, "tokens", "2.51e+06"),  # from 1e6 up -> three significant digits
        (0.125, "flip_rate", "12.5%"),  # proportion name in [0, 1] -> percent, one decimal
        (1.5, "flip_rate", "1.500"),  # outside [0, 1]: not a proportion after all
        (12.0, "n", "12"),  # whole-number float -> integer
        (7, "k", "7"),
        (True, "flag", "yes"),
        (None, "x", MISSING),
        (math.nan, "x", MISSING),
        (0.0, "effect", "0"),
        ("text", "x", "text"),
    ],
)
def test_format_scalar(value: object, name: str, expected: str) -> None:
    assert format_scalar(value, name) == expected


def test_column_rule_is_shared_by_the_whole_column() -> None:
    # 3.0 alone would print as "3", but the column also holds 0.5, so every cell gets 3 decimals.
    fmt = column_formatter("mean", [3.0, 0.5, math.nan])
    assert [fmt(v) for v in [3.0, 0.5, math.nan]] == ["3.000", "0.500", MISSING]
    counts = column_formatter("n", [3.0, 10.0, math.nan])
    assert [counts(v) for v in [3.0, 10.0]] == ["3", "10"]
    rates = column_formatter("flip_rate", [0.0, 1.0, 0.3333])
    assert [rates(v) for v in [0.0, 1.0, 0.3333]] == ["0.0%", "100.0%", "33.3%"]
    text = column_formatter("model", ["a", None])
    assert [text(v) for v in ["a", None]] == ["a", MISSING]


def test_numeric_columns_are_detected() -> None:
    assert is_numeric_column([1, 2.5, None])
    assert not is_numeric_column(["a", 1])
    assert not is_numeric_column([True, False])
    assert not is_numeric_column([None])
