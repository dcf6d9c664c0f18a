"""Cascade: does an uninfected honest agent convert more often when more peers are infected?"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables, wilson_interval
from backchannel.paradigms.peer_pressure._base import INFECTED, merge_coded, private_answers
from backchannel.paradigms.peer_pressure._cells import Cells

BINS = ("0", "1", "2", "3", "4", "5+")
_BIN_LABELS = np.array(BINS, dtype=object)


def _bin(count: int) -> str:
    return BINS[min(count, len(BINS) - 1)]


def cascade_transitions(tables: RunTables, judge: str) -> pd.DataFrame:
    """One row per honest agent uninfected at checkpoint r-1 with a valid answer at r.

    Columns: conversation_id, agent, checkpoint (r), infected_peers (other honest agents
    infected at r-1, among those with a valid answer there), bin, converted (infected at r).
    """
    answers = private_answers(tables, judge)
    answers = answers.assign(infected=answers["p"] == INFECTED)
    infected_total = answers.groupby(["conversation_id", "checkpoint"])["infected"].sum()
    before = answers.assign(checkpoint=answers["checkpoint"] + 1)
    before = before.rename(columns={"infected": "infected_before"})
    keys = ["conversation_id", "agent", "checkpoint"]
    paired = merge_coded(
        before[[*keys, "infected_before"]], answers[[*keys, "infected"]], keys, "inner"
    )
    paired = paired[~paired["infected_before"]]
    index = pd.MultiIndex.from_arrays([paired["conversation_id"], paired["checkpoint"] - 1])
    peers = infected_total.reindex(index).to_numpy()
    paired = paired.assign(infected_peers=peers.astype("int64"))
    # `_bin` for every row at once: the count, capped at the last bin, picks its label.
    capped = np.minimum(paired["infected_peers"].to_numpy(dtype=np.int64), len(BINS) - 1)
    paired["bin"] = _BIN_LABELS[capped].tolist()
    paired = paired.rename(columns={"infected": "converted"})
    columns = ["conversation_id", "agent", "checkpoint", "infected_peers", "bin", "converted"]
    return paired[columns].reset_index(drop=True)


def cascade_summary(transitions: pd.DataFrame) -> list[dict[str, Any]]:
    """Agents at risk, conversions and the conversion probability (95 % Wilson interval) in
    every bin of infected peers; a bin without agents at risk says so in `skipped`."""
    rows = []
    for label in BINS:
        in_bin = transitions[transitions["bin"] == label]
        n, conversions = len(in_bin), int(in_bin["converted"].sum())
        interval = wilson_interval(conversions, n)
        rows.append(
            {
                "bin": label,
                "n": n,
                "conversions": conversions,
                "probability": interval.estimate,
                "probability_low": interval.low,
                "probability_high": interval.high,
                "skipped": "no agent at risk in this bin" if n == 0 else None,
            }
        )
    return rows


def cascade(tables: RunTables, judge: str) -> pd.DataFrame:
    """Conversion probability by bin of infected peers, per cell (every factor of the run, so
    per k and per group size N, where a bin means a larger share of a small room).

    Columns: the cell's factors, bin, n (agents at risk), conversions, probability with its
    95 % Wilson interval (probability_low, probability_high), and skipped (why there is no
    probability: no agent at risk in the bin).
    """
    cells = Cells.of(tables, Design.of(tables).factors)
    transitions = cascade_transitions(tables, judge)
    rows = [
        {**level, **row}
        for level, part in cells.split(transitions)
        for row in cascade_summary(part)
    ]
    columns = [*cells.by, "bin", "n", "conversions", "probability", "probability_low"]
    return pd.DataFrame(rows, columns=[*columns, "probability_high", "skipped"])
