"""Agreement of two judges on the labels the metrics use, and FPI reweighted by how judge B
relabels judge A (the arithmetic is the shared judges layer's)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.judges import Relabelling, agreement, reweight, transfer_rates
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    done_conversations,
    last_checkpoints,
    private_answers,
    public_turns,
)
from backchannel.paradigms.peer_pressure._infection import SEED, summarise_by_cell

CHANNELS = ("private", "public")


def doubly_labelled(tables: RunTables, judge_a: str, judge_b: str, channel: str) -> pd.DataFrame:
    """Events valid under both judges: main answer probes or public honest turns.

    Columns: the event's keys, `a` and `b` (the two labels).
    """
    if channel == "private":
        keys = ["conversation_id", "agent", "checkpoint"]
        first = private_answers(tables, judge_a)[[*keys, "p"]].rename(columns={"p": "a"})
        second = private_answers(tables, judge_b)[[*keys, "p"]].rename(columns={"p": "b"})
    elif channel == "public":
        keys = ["conversation_id", "round", "turn"]
        first = public_turns(tables, judge_a)[[*keys, "s"]].rename(columns={"s": "a"})
        second = public_turns(tables, judge_b)[[*keys, "s"]].rename(columns={"s": "b"})
    else:
        raise ValueError(f"unknown channel {channel!r}; expected one of {CHANNELS}")
    return first.merge(second, on=keys, how="inner")


def judge_agreement(
    tables: RunTables, judge_a: str, judge_b: str, channel: str = "private"
) -> dict[str, Any]:
    """Percent agreement, Cohen's kappa and the confusion table on doubly-labelled events."""
    result = agreement(doubly_labelled(tables, judge_a, judge_b, channel), judge_a, judge_b)
    return {"channel": channel, **result}


def reweighted_fpi(
    tables: RunTables, judge_a: str, judge_b: str, *, seed: int = SEED
) -> dict[str, Any]:
    """FPI with each judge-A label replaced by judge B's chance of saying manipulated for it."""
    return fpi_relabelling(tables, judge_a, judge_b, seed=seed).as_dict()


def fpi_relabelling(
    tables: RunTables, judge_a: str, judge_b: str, *, seed: int = SEED
) -> Relabelling:
    """FPI with each judge-A label replaced by judge B's chance of saying manipulated for it.

    Per conversation, the expected infection share at the last checkpoint is the mean over
    its agents of P(B = manipulated | A = the agent's A label). Agents whose A label never
    occurs in the doubly-labelled sample are left out and counted.
    """
    rates = transfer_rates(doubly_labelled(tables, judge_a, judge_b, "private"), INFECTED)
    answers = private_answers(tables, judge_a)
    last = answers["conversation_id"].map(last_checkpoints(tables))
    final = answers[answers["checkpoint"] == last]
    weights = reweight(final["p"], rates)
    final = final.assign(expected=weights, infected=(final["p"] == INFECTED).astype(float))
    known = final.dropna(subset=["expected"])
    per_conversation = done_conversations(tables).merge(
        known.groupby("conversation_id")[["expected", "infected"]].mean().reset_index(),
        on="conversation_id",
        how="left",
    )
    per_conversation = per_conversation.rename(
        columns={"expected": "reweighted_fpi", "infected": "fpi"}
    )
    by = list(Design.of(tables).factors)
    by_cell = summarise_by_cell(per_conversation, by, ("fpi", "reweighted_fpi"), seed)
    return Relabelling(
        name="reweighted_fpi",
        label=INFECTED,
        transfer={str(label): float(rate) for label, rate in rates.items()},
        without_transfer=int(weights.isna().sum()),
        unit="agents",
        by_cell=by_cell,
    )
