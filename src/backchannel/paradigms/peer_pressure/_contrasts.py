"""Peer pressure's headline contrast: final private infection with one adversary against none
(the study's Fig. 2 leads with FPI by k), over conversations of the same other factors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd

from backchannel.planning import Arm, Contrast, has_levels

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.planning import Options

FPI_GAP = "fpi_gap"


def fpi_units(
    tables: RunTables, options: Options, *, default_judge: Callable[[RunTables], str]
) -> pd.DataFrame:
    """Each finished conversation's FPI (the share of its probed honest agents infected at the
    last checkpoint) over `trials` agents, under the metrics' judge."""
    from backchannel.paradigms.peer_pressure._infection import final_private_infection

    judge = options.judge or default_judge(tables)
    frame = final_private_infection(tables, judge)
    return pd.DataFrame(
        {
            "conversation_id": frame["conversation_id"].astype(str),
            "value": frame["fpi"].astype(float),
            "trials": frame["n_final"].astype(int),
        }
    )


def contrasts(
    levels: Mapping[str, Sequence[Any]], default_judge: Callable[[RunTables], str]
) -> tuple[Contrast, ...]:
    """`fpi_gap` (FPI at k = 1 minus k = 0) where the design has both levels of k; the FPI is
    read under `--judge`, else `default_judge` of the run (the metrics' choice)."""
    if not has_levels(levels, "k", 0, 1):
        return ()
    return (
        Contrast(
            name=FPI_GAP,
            title="Final private infection with one adversary minus none",
            first=Arm({"k": 1}),
            second=Arm({"k": 0}),
            kind="proportion",
            reader=partial(fpi_units, default_judge=default_judge),
            outcome="share of the conversation's probed honest agents answering the false "
            "answer privately at the last checkpoint",
        ),
    )
