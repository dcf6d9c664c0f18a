"""Typed results: rows carry factors and nothing undeclared, JSON keeps factors first, and the
separation check finds every factor averaged over without being named."""

from __future__ import annotations

import pandas as pd
import pytest
from pydantic import ValidationError

from backchannel.analysis import CellRow, Design, Metrics, RunTables, separation_problems


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
