"""Cells from the design: every level is a cell of its own (a missing one too), list and
mapping levels group by value, and cells come in sorted order."""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import Design
from backchannel.paradigms.peer_pressure._cells import Cells, model_factors, per_cell_rows


def test_levels_group_by_value_and_a_missing_level_is_kept() -> None:
    conversations = pd.DataFrame(
        {
            "conversation_id": ["a", "b", "c", "d", "e"],
            "k_share": [0.5, None, 0.5, None, 0.25],
            "models": [["x", "y"], ["x"], ["x", "y"], ["x"], ["x"]],
        }
    )
    cells = Cells(conversations, ["k_share", "models"])
    # Sorted by level as the shared cell_groups orders them; the missing k_share first, never
    # dropped.
    assert cells.levels == [
        {"k_share": None, "models": ["x"]},
        {"k_share": 0.25, "models": ["x"]},
        {"k_share": 0.5, "models": ["x", "y"]},
    ]
    turns = pd.DataFrame({"conversation_id": ["a", "a", "b", "c", "d", "d", "d"]})
    counts = per_cell_rows(cells, turns, lambda part: {"n": len(part)})
    # b and d share a cell (4 turns), a and c another (3); e's cell has none but is listed.
    assert [row["n"] for row in counts] == [4, 0, 3]
    present = per_cell_rows(cells, turns, lambda part: {"n": len(part)}, every=False)
    assert [row["n"] for row in present] == [4, 3]


def test_no_factor_is_one_cell_and_no_conversation_no_cell() -> None:
    conversations = pd.DataFrame({"conversation_id": ["a", "b"]})
    assert Cells(conversations, []).levels == [{}]
    assert Cells(conversations.iloc[0:0], []).levels == []


def test_model_factors_are_the_ones_that_name_models() -> None:
    design = Design(("model", "k", "models", "adversary_model", "assignment"))
    assert model_factors(design) == ["model", "models", "adversary_model"]


def test_cells_of_a_run_are_found_once_per_grouping_inside_reuse() -> None:
    from test_metrics import build_run, conversation

    agents = [("Alice", "adversary"), ("Bob", "honest")]
    tables = build_run(
        [
            conversation("a", {"model": "m", "dataset": "d", "k": 1, "n_agents": 2}, agents),
            conversation("b", {"model": "m", "dataset": "d", "k": 2, "n_agents": 2}, agents),
        ]
    )
    with tables.reuse():
        cells = Cells.of(tables, ["k"])
        assert Cells.of(tables, ("k",)) is cells
        assert Cells.of(tables, ["model"]) is not cells
        # Two levels of k, one cell each, in sorted order.
        assert cells.levels == [{"k": 1}, {"k": 2}]
    assert Cells.of(tables, ["k"]) is not Cells.of(tables, ["k"])


def test_cell_codes_match_a_look_up_per_row() -> None:
    import numpy as np
    from _reference import cell_codes

    conversations = pd.DataFrame(
        {"conversation_id": ["a", "b", "c", "d"], "k": [1, 0, 1, None]}
    ).astype({"conversation_id": "str"})
    cells = Cells(conversations, ["k"])
    rows = pd.DataFrame({"conversation_id": ["d", "a", None, "zz", "c", "b", "a"]})
    for frame in (rows.astype({"conversation_id": "str"}), rows.astype(object), rows.iloc[0:0]):
        found = cells.code(frame)
        assert found.tolist() == cell_codes(cells, frame)
        assert found.index.equals(frame.index) and found.dtype == np.int64
    assert cells.code(rows.astype({"conversation_id": "str"})).tolist() == [0, 2, -1, -1, 2, 1, 2]
    # conversation ids that are not text still match by value
    numbered = Cells(pd.DataFrame({"conversation_id": [1, 2, 3], "k": [1, 0, 1]}), ["k"])
    frame = pd.DataFrame({"conversation_id": [2, 1, 7, 3]})
    assert numbered.code(frame).tolist() == cell_codes(numbered, frame) == [0, 1, -1, 1]
