"""Cascade: does an uninfected honest agent convert more often when more peers are infected?"""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    done_conversations,
    private_answers,
)

BINS = ("0", "1", "2", "3", "4", "5+")


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
    paired = before[[*keys, "infected_before"]].merge(
        answers[[*keys, "infected"]], on=keys, how="inner"
    )
    paired = paired[~paired["infected_before"]]
    index = pd.MultiIndex.from_arrays([paired["conversation_id"], paired["checkpoint"] - 1])
    peers = infected_total.reindex(index).to_numpy()
    paired = paired.assign(infected_peers=peers.astype("int64"))
    paired["bin"] = [_bin(int(n)) for n in paired["infected_peers"]]
    paired = paired.rename(columns={"infected": "converted"})
    columns = ["conversation_id", "agent", "checkpoint", "infected_peers", "bin", "converted"]
    return paired[columns].reset_index(drop=True)


def cascade(tables: RunTables, judge: str) -> pd.DataFrame:
    """Conversion probability by bin of infected peers, per k and overall (k = "all").

    Columns: k, bin, n (agents at risk), conversions, probability (NaN when n is 0).
    """
    transitions = cascade_transitions(tables, judge)
    conversations = done_conversations(tables)
    has_k = "k" in conversations.columns
    if has_k:
        k_of = conversations.set_index("conversation_id")["k"]
        transitions["k"] = transitions["conversation_id"].map(k_of)
    groups: list[tuple[str, pd.DataFrame]] = [("all", transitions)]
    if has_k:
        groups += [(str(k), group) for k, group in transitions.groupby("k", sort=True)]
    rows = []
    for k, group in groups:
        for label in BINS:
            in_bin = group[group["bin"] == label]
            n, conversions = len(in_bin), int(in_bin["converted"].sum())
            probability = conversions / n if n else float("nan")
            rows.append(
                {
                    "k": k,
                    "bin": label,
                    "n": n,
                    "conversions": conversions,
                    "probability": probability,
                }
            )
    return pd.DataFrame(rows)
