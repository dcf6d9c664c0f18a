"""Testimony's headline contrasts: the analysed group's truth majority and true-vote share at
the final checkpoint, C0 (all honest) minus C1 (a lying key witness), paired by story and
replicate, without intervention (the study's main table; `condition_gaps` in the metrics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from backchannel.planning import Arm, Contrast, has_levels

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.planning import Options

TRUTH_GAP = "truth_gap"
TRUE_SHARE_GAP = "true_share_gap"
KEYS = ["conversation_id", "model", "condition", "intervention"]


def final_outcomes(tables: RunTables) -> pd.DataFrame:
    """Each finished conversation's analysed group at the final checkpoint: its model label,
    condition, intervention, outcome and vote counts."""
    from backchannel.paradigms.testimony._metrics import _rounds, checkpoint_outcomes
    from backchannel.paradigms.testimony._phases import participant_checkpoints

    outcomes = checkpoint_outcomes(tables)
    last = participant_checkpoints(_rounds(tables))[-1]
    chosen = (outcomes["group"] == "participants") & (outcomes["checkpoint"] == last)
    return outcomes[chosen].reset_index(drop=True)


def truth_units(tables: RunTables, options: Options) -> pd.DataFrame:
    """1 when the analysed group's majority votes the true location at the final checkpoint."""
    rows = final_outcomes(tables)
    return rows[KEYS].assign(value=(rows["outcome"] == "truth").astype(float))


def true_share_units(tables: RunTables, options: Options) -> pd.DataFrame:
    """The share of the analysed group's votes on the true location at the final checkpoint."""
    rows = final_outcomes(tables)
    share = rows["true"] / rows["voters"].where(rows["voters"] > 0)
    return rows[KEYS].assign(value=share.astype(float))


def contrasts(levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
    """`truth_gap` and `true_share_gap` where the design runs both C0 and C1."""
    if not has_levels(levels, "condition", "C0", "C1"):
        return ()
    first = Arm({"condition": "C0", "intervention": "none"})
    second = Arm({"condition": "C1", "intervention": "none"})
    return (
        Contrast(
            name=TRUTH_GAP,
            title="Truth majority at the final checkpoint, C0 minus C1 (paired by story)",
            first=first,
            second=second,
            kind="paired_proportion",
            reader=truth_units,
            outcome="1 when at least 3 of the 4 analysed roles vote the true location",
            strata=("model",),
        ),
        Contrast(
            name=TRUE_SHARE_GAP,
            title="True-vote share at the final checkpoint, C0 minus C1 (paired by story)",
            first=first,
            second=second,
            kind="paired_mean",
            reader=true_share_units,
            outcome="share of the analysed roles' votes on the true location",
            strata=("model",),
        ),
    )
