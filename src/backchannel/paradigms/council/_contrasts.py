"""The council's headline contrast: first-choice concentration in state A (one model for every
role) minus state B (a pool of models), the study's primary pre-registered comparison, over
independent deliberations of the same scenario and Delphi variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from backchannel.planning import Arm, Contrast, has_levels

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.planning import Options

FCC_GAP = "fcc_gap"


def fcc_units(tables: RunTables, options: Options) -> pd.DataFrame:
    """Each deliberation's first-choice concentration, tallied in its own pool (A or B; the
    re-tally C is not an arm)."""
    from backchannel.paradigms.council._extract import deliberations
    from backchannel.paradigms.council._metrics import deliberation_table

    table = deliberation_table(deliberations(tables))
    if not len(table):
        return pd.DataFrame(columns=["conversation_id", "value", "scenario", "delphi"])
    table = table[table["state"] != "C"]
    return pd.DataFrame(
        {
            "conversation_id": table["conversation_id"].astype(str),
            "value": table["fcc"].astype(float),
            "scenario": table["scenario"],
            "delphi": table["delphi"],
        }
    )


def contrasts(levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
    """`fcc_gap` (A minus B) where the design runs both pools."""
    if not has_levels(levels, "pool", "A", "B"):
        return ()
    return (
        Contrast(
            name=FCC_GAP,
            title="First-choice concentration, one model (A) minus a pool of models (B)",
            first=Arm({"pool": "A"}),
            second=Arm({"pool": "B"}),
            kind="mean",
            reader=fcc_units,
            outcome="share of the deliberation's evaluators ranking its most common first "
            "choice first",
            strata=("scenario", "delphi"),
        ),
    )
