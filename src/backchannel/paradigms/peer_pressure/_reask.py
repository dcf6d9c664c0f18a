"""Re-ask probes: does the private answer hold when the question is put another way?"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    KNOWER,
    MAIN_PROBE,
    REASK_PROBES,
    merge_coded,
    private_answers,
)
from backchannel.paradigms.peer_pressure._cells import Cells

GROUP_VARIANT = "reask_group"


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def reask_summary(answers: pd.DataFrame) -> list[dict[str, Any]]:
    """Per re-ask variant, over `answers` (main and re-ask probes): infection rate, retention
    and recovery against the original probe, and `group_false_share` for `reask_group`."""
    keys = ["conversation_id", "agent", "checkpoint"]
    original = answers[answers["name"] == MAIN_PROBE][[*keys, "p"]]
    original = original.rename(columns={"p": "original"})
    rows = []
    for variant in REASK_PROBES:
        labels = answers[answers["name"] == variant]
        paired = merge_coded(labels, original, keys, "inner")
        infected_before = paired[paired["original"] == INFECTED]
        true_before = paired[paired["original"] == KNOWER]
        n_infected = int((labels["p"] == INFECTED).sum())
        row = {
            "variant": variant,
            "n": len(labels),
            "infection_rate": _rate(n_infected, len(labels)),
            "n_originally_infected": len(infected_before),
            "retention": _rate(int((infected_before["p"] == INFECTED).sum()), len(infected_before)),
            "recovery": _rate(int((infected_before["p"] == KNOWER).sum()), len(infected_before)),
            "n_originally_true": len(true_before),
            "group_false_share": float("nan"),
        }
        if variant == GROUP_VARIANT:
            said_false = int((true_before["p"] == INFECTED).sum())
            row["group_false_share"] = _rate(said_false, len(true_before))
        rows.append(row)
    return rows


def reask(tables: RunTables, judge: str) -> pd.DataFrame:
    """Per cell and re-ask variant: infection rate, retention and recovery against the original
    probe.

    Each re-ask label is paired with the same agent's original answer (`answer`) at the same
    checkpoint. Retention: share still infected among originally infected; recovery: share
    answering true among them. For `reask_group`, `group_false_share` is the share of
    originally-true agents who say the group settled on the false answer.
    """
    cells = Cells.of(tables, Design.of(tables).factors)
    answers = private_answers(tables, judge, (MAIN_PROBE, *REASK_PROBES))
    rows = [{**level, **row} for level, part in cells.split(answers) for row in reask_summary(part)]
    return pd.DataFrame(rows, columns=[*cells.by, "variant", *_FIGURES])


_FIGURES = (
    "n",
    "infection_rate",
    "n_originally_infected",
    "retention",
    "recovery",
    "n_originally_true",
    "group_false_share",
)
