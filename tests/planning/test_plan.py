"""A plan row's conversations per cell: the units per arm over the cells each arm pools, and
over the share of each cell a reader's stratum holds (worked out by hand)."""

from __future__ import annotations

import pandas as pd
import pytest

from backchannel.planning import (
    Arm,
    Assumption,
    Contrast,
    Target,
    Units,
    plan_row,
    stratum_shares,
    units_for_halfwidth,
)

CONTRAST = Contrast(
    "gap",
    "a gap",
    Arm({"k": 1}),
    Arm({"k": 0}),
    "mean",
    reader=lambda tables, options: pd.DataFrame(),
    strata=("model",),
)
CELLS = [{"k": 1, "size": "s"}, {"k": 0, "size": "s"}, {"k": 1, "size": "l"}, {"k": 0, "size": "l"}]


def _units() -> Units:
    # Arm first: 6 conversations, 4 of model a (3 of them size s); arm second: 4, 1 of model a.
    return Units(
        pd.DataFrame(
            {
                "conversation_id": [f"c{i}" for i in range(10)],
                "value": [1.0] * 10,
                "trials": 1.0,
                "arm": ["first"] * 6 + ["second"] * 4,
                "model": ["a", "a", "a", "a", "b", "b", "a", "b", "b", "b"],
                "size": ["s", "s", "s", "l", "s", "l", "s", "s", "l", "l"],
            }
        ),
        ("size", "model"),
    )


def test_a_readers_stratum_holds_its_share_of_each_cell() -> None:
    units = _units()
    assert stratum_shares(CONTRAST, units, {"model": "a"}, CELLS) == (4 / 6, 1 / 4)
    # Within size s (a level of the cells), model a is 3 of 4 conversations in the first arm
    # and 1 of 2 in the second.
    assert stratum_shares(CONTRAST, units, {"size": "s", "model": "a"}, CELLS) == (3 / 4, 1 / 2)
    # A stratum of the cells' own levels is the whole cell.
    assert stratum_shares(CONTRAST, units, {"size": "l"}, CELLS) == (1.0, 1.0)


def test_conversations_per_cell_follow_the_share() -> None:
    assumption = Assumption("mean", 1.0, 0.0, 1.0, 1.0)
    target = Target(halfwidth=0.3)
    n = units_for_halfwidth(assumption, 0.3)
    whole = plan_row(CONTRAST, {"model": "a"}, assumption, target, (2, 2))
    assert whole.per_cell == -(-n // 2)
    # The second arm's cells hold a quarter of model a: n over 2 cells x 1/4.
    part = plan_row(CONTRAST, {"model": "a"}, assumption, target, (2, 2), shares=(4 / 6, 1 / 4))
    assert part.units == n and part.per_cell == -(-n * 4 // 2)
    assert part.as_dict()["stratum_share_second"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="no conversation in an arm"):
        plan_row(CONTRAST, {"model": "c"}, assumption, target, (2, 2), shares=(0.0, 1.0))
