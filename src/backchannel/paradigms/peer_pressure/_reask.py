"""Re-ask probes: does the private answer hold when the question is put another way?"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
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
    counts = _reask_counts(answers, cells.code(answers).to_numpy(), len(cells.levels))
    rows = [
        {**level, **_reask_row(variant, counts[variant][:, index])}
        for index, level in enumerate(cells.levels)
        for variant in REASK_PROBES
    ]
    return pd.DataFrame(rows, columns=[*cells.by, "variant", *_FIGURES])


_COUNTS = ("n", "n_infected", "before_infected", "still", "back", "before_true", "said_false")


def _reask_counts(
    answers: pd.DataFrame, cell: npt.NDArray[np.int64], n_cells: int
) -> dict[str, npt.NDArray[np.int64]]:
    """Per re-ask variant, the `_COUNTS` of each cell (rows) over all answers at once: each
    re-ask label is paired with the original answer once, and the pairs counted by cell (a
    conversation lies in one cell, so pairing per cell finds the same pairs)."""
    keys = ["conversation_id", "agent", "checkpoint"]
    coded = answers.assign(**{_CELL: cell})
    name = coded["name"].to_numpy(dtype=object)
    original = coded[name == MAIN_PROBE][[*keys, "p"]].rename(columns={"p": "original"})

    def per_cell(mask: npt.NDArray[np.bool_], cells: npt.NDArray[np.int64]) -> Any:
        chosen = cells[mask & (cells >= 0)]
        return np.bincount(chosen, minlength=n_cells)[:n_cells]

    found: dict[str, npt.NDArray[np.int64]] = {}
    for variant in REASK_PROBES:
        labels = coded[name == variant]
        p = labels["p"].to_numpy(dtype=object)
        own = labels[_CELL].to_numpy(dtype=np.int64)
        paired = merge_coded(labels, original, keys, "inner")
        was = paired["original"].to_numpy(dtype=object)
        now = paired["p"].to_numpy(dtype=object)
        at = paired[_CELL].to_numpy(dtype=np.int64)
        infected, true = was == INFECTED, was == KNOWER
        found[variant] = np.array(
            [
                per_cell(np.ones(len(own), dtype=bool), own),
                per_cell(p == INFECTED, own),
                per_cell(infected, at),
                per_cell(infected & (now == INFECTED), at),
                per_cell(infected & (now == KNOWER), at),
                per_cell(true, at),
                per_cell(true & (now == INFECTED), at),
            ],
            dtype=np.int64,
        )
    return found


def _reask_row(variant: str, counts: npt.NDArray[np.int64]) -> dict[str, Any]:
    """One variant's figures in one cell from its `_COUNTS`."""
    n, n_infected, before_infected, still, back, before_true, said_false = (int(c) for c in counts)
    return {
        "variant": variant,
        "n": n,
        "infection_rate": _rate(n_infected, n),
        "n_originally_infected": before_infected,
        "retention": _rate(still, before_infected),
        "recovery": _rate(back, before_infected),
        "n_originally_true": before_true,
        "group_false_share": _rate(said_false, before_true)
        if variant == GROUP_VARIANT
        else float("nan"),
    }


_CELL = "__pp_cell__"


_FIGURES = (
    "n",
    "infection_rate",
    "n_originally_infected",
    "retention",
    "recovery",
    "n_originally_true",
    "group_false_share",
)
