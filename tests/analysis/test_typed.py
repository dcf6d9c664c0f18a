"""Typed results: rows carry factors and nothing undeclared, JSON keeps factors first, and the
separation check finds every factor averaged over without being named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from backchannel.analysis import (
    CellRow,
    Design,
    Metrics,
    Record,
    RunTables,
    cell_groups,
    separation_problems,
)


class Rate(CellRow):
    rate: float | None
    n: int


class Summary(Metrics):
    run_level = frozenset({"failures"})
    failures: int
    by_cell: list[Rate]
    overall: float | None = None


def _tables(factors: list[str]) -> RunTables:
    conversations = pd.DataFrame(
        {"conversation_id": ["c1"], "status": ["done"], **{f: ["x"] for f in factors}}
    )
    return RunTables(pd.DataFrame(), pd.DataFrame(), conversations, {"factors": factors})


def test_design_reads_declared_factors_that_conversations_carry() -> None:
    tables = _tables(["model", "k"])
    tables.manifest["factors"] = ["model", "k", "absent"]
    design = Design.of(tables)
    assert design.factors == ("model", "k")
    assert design.by(pooled=["k"], extra=["checkpoint"]) == ["model", "checkpoint"]
    with pytest.raises(ValueError, match="not factors"):
        design.by(pooled=["rounds"])


def test_rows_take_factor_keys_and_refuse_undeclared_ones() -> None:
    data = {"failures": 0, "by_cell": [{"model": "m", "k": 1, "rate": 0.5, "n": 4}]}
    built = Summary.build(data, ["model", "k"])
    row = built.by_cell[0]
    assert row.cell == {"model": "m", "k": 1} and row.rate == 0.5
    assert list(built.as_json()["by_cell"][0]) == ["model", "k", "rate", "n"]
    with pytest.raises(ValidationError, match="neither its fields nor factors"):
        Summary.build(
            {"failures": 0, "by_cell": [{"model": "m", "rate_x": 1, "rate": 1, "n": 1}]}, ["model"]
        )


def test_json_omits_pooled_unless_something_is() -> None:
    built = Summary.build({"failures": 1, "by_cell": []}, [])
    assert "pooled" not in built.as_json()
    named = Summary.build({"failures": 1, "by_cell": [], "pooled": {"overall": ["k"]}}, ["k"])
    assert named.as_json()["pooled"] == {"overall": ["k"]}


def test_separation_names_missing_factors_and_whole_run_figures() -> None:
    rows = [{"model": "m", "rate": 0.5, "n": 2}]
    pooled_silently = Summary.build({"failures": 0, "by_cell": rows, "overall": 0.5}, ["model"])
    assert separation_problems(pooled_silently, ["model", "k"]) == [
        "by_cell: a row without the factor(s) k",
        "overall: a figure for the whole run, outside any per-cell table",
    ]
    said = Summary.build(
        {"failures": 0, "by_cell": rows, "overall": 0.5, "pooled": {"by_cell": ["k"]}},
        ["model"],
    )
    assert separation_problems(said, ["model", "k"]) == [
        "overall: a figure for the whole run, outside any per-cell table"
    ]
    whole = Summary.build(
        {
            "failures": 0,
            "by_cell": rows,
            "overall": 0.5,
            "pooled": {"by_cell": ["k"], "overall": ["model", "k"]},
        },
        ["model"],
    )
    assert separation_problems(whole, ["model", "k"]) == []


class Fit(Record):
    formula: str
    n: int
    r_squared: float | None = None
    skipped: str | None = None


class Group(CellRow):
    keys = ("scenario",)
    omit_unset = True
    state: str
    rate: float | None = None


class Nested(Metrics):
    run_level = frozenset({"tests.models", "stability.window"})
    tests: dict[str, dict[str, Fit]]
    stability: dict[str, int | list[Group]]


def test_unset_optional_parts_are_left_out_but_a_given_null_stays() -> None:
    assert Fit(formula="y ~ 1", n=1, skipped="too few").model_dump() == {
        "formula": "y ~ 1",
        "n": 1,
        "skipped": "too few",
    }
    given = Fit.model_validate({"formula": "y ~ x", "n": 5, "r_squared": None})
    assert given.model_dump(mode="json") == {"formula": "y ~ x", "n": 5, "r_squared": None}
    rows = [{"scenario": "s", "k": 1, "state": "A"}, {"scenario": "s", "state": "C", "rate": None}]
    built = [Group.model_validate(r) for r in rows]
    assert [r.model_dump(mode="json") for r in built] == [
        {"scenario": "s", "k": 1, "state": "A"},
        {"scenario": "s", "state": "C", "rate": None},
    ]
    assert Rate(rate=None, n=0).model_dump() == {"rate": None, "n": 0}  # not opted in


def test_run_level_may_name_a_part_of_a_section() -> None:
    data = {
        "tests": {"models": {"main": {"formula": "y ~ C(k)", "n": 4, "r_squared": 0.5}}},
        "stability": {"window": 3, "rows": [{"scenario": "s", "state": "A", "rate": 1.0}]},
    }
    built = Nested.build(data, ["k"])
    assert separation_problems(built, ["k"]) == ["stability.rows: a row without the factor(s) k"]
    assert separation_problems(built, []) == []


def test_levels_are_read_exactly_from_each_cell() -> None:
    conversations = pd.DataFrame(
        {
            "conversation_id": ["c1", "c2", "c3"],
            "cell": ['{"m": null, "k": [1, 2]}', '{"m": 2, "k": [3]}', None],
            "m": [float("nan"), 2.0, 5.0],
            "k": [[1, 2], [3], [4]],
        }
    )
    levels = Design(("m", "k")).levels(conversations)
    assert levels == {
        "c1": {"m": None, "k": [1, 2]},
        "c2": {"m": 2, "k": [3]},
        "c3": {"m": 5, "k": [4]},
    }
    assert isinstance(levels["c2"]["m"], int)


def test_levels_decode_each_cell_once_and_keep_each_conversations_own_levels() -> None:
    cells = ['{"k": [1, 2], "m": 0}', '{"k": [3], "m": 1}', '{"k": [1, 2], "m": 0}', ""]
    conversations = pd.DataFrame(
        {"conversation_id": ["c1", "c2", "c3", "c4"], "cell": cells, "k": [0, 0, 0, 9]}
    )
    levels = Design(("k", "m")).levels(conversations)
    assert levels["c1"] == levels["c3"] == {"k": [1, 2], "m": 0}
    assert levels["c1"] is not levels["c3"]  # each conversation has its own mapping
    assert levels["c1"]["k"] is levels["c3"]["k"]  # one decoded cell behind both
    assert levels["c2"] == {"k": [3], "m": 1}
    assert levels["c4"] == {"k": 9, "m": None}  # no cell: its factor columns


def test_cell_groups_order_levels_naturally_and_keep_unhashable_ones() -> None:
    frame = pd.DataFrame({"conversation_id": ["a", "b", "c", "d"], "role": ["x", "y", "x", "x"]})
    levels = {"a": {"r": 10}, "b": {"r": 3}, "c": {"r": None}, "d": {"r": 10, "k": [1]}}
    groups = cell_groups(frame, ["r", "role"], levels)
    assert [(cell, list(g["conversation_id"])) for cell, g in groups] == [
        ({"r": None, "role": "x"}, ["c"]),
        ({"r": 3, "role": "y"}, ["b"]),
        ({"r": 10, "role": "x"}, ["a", "d"]),
    ]
    lists = cell_groups(frame, ["k"], {"a": {"k": [2]}, "b": {"k": [1]}, "c": {"k": [2]}, "d": {}})
    assert [cell for cell, _ in lists] == [{"k": None}, {"k": [1]}, {"k": [2]}]
    # a factor is read from the levels even where the frame has a column of its name
    shadowed = frame.assign(r=[0, 0, 0, 0])
    assert [cell["r"] for cell, _ in cell_groups(shadowed, ["r"], levels)] == [None, 3, 10]
    (whole,) = cell_groups(frame.iloc[0:0], [])
    assert whole[0] == {} and whole[1].empty
    assert cell_groups(frame.iloc[0:0], ["role"]) == []
    with pytest.raises(KeyError, match="neither a column"):
        cell_groups(frame, ["r"])


def test_cell_groups_keep_typed_columns_and_mixed_values_apart() -> None:
    # a float column: NaN is the missing level; 2.0 and 1.5 are their own levels, rows keep
    # their order inside a group
    frame = pd.DataFrame(
        {
            "conversation_id": ["a", "b", "c", "d", "e"],
            "x": [2.0, np.nan, 1.5, 2.0, np.nan],
            "mixed": [1, 1.0, True, "1", 1],
        }
    )
    groups = cell_groups(frame, ["x"])
    assert [(cell, list(g["conversation_id"])) for cell, g in groups] == [
        ({"x": None}, ["b", "e"]),
        ({"x": 1.5}, ["c"]),
        ({"x": 2.0}, ["a", "d"]),
    ]
    # an object column groups by each value's JSON text: 1, 1.0 and true stay apart, and the
    # levels that sort alike (1, 1.0 and true are all the number 1) keep their first appearance
    mixed = cell_groups(frame, ["mixed"])
    assert [(cell["mixed"], list(g["conversation_id"])) for cell, g in mixed] == [
        (1, ["a", "e"]),
        (1.0, ["b"]),
        (True, ["c"]),
        ("1", ["d"]),
    ]
    # two keys: the cross of a factor and a column, in natural order of both
    levels = {"a": {"f": "q"}, "b": {"f": "p"}, "c": {"f": "q"}, "d": {"f": "p"}, "e": {"f": "q"}}
    crossed = cell_groups(frame, ["f", "x"], levels)
    assert [(cell, list(g["conversation_id"])) for cell, g in crossed] == [
        ({"f": "p", "x": None}, ["b"]),
        ({"f": "p", "x": 2.0}, ["d"]),
        ({"f": "q", "x": None}, ["e"]),
        ({"f": "q", "x": 1.5}, ["c"]),
        ({"f": "q", "x": 2.0}, ["a"]),
    ]
