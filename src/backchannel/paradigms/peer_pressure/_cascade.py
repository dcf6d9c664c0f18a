"""Cascade: does an uninfected honest agent convert more often when more peers are infected?"""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import RunTables, wilson_interval
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
    """Conversion probability by bin of infected peers: overall (n_agents and k "all"), per k
    (n_agents "all"), and per group size and k, since a bin means more peers in a larger room.

    Columns: n_agents, k, bin, n (agents at risk), conversions, probability with its 95 %
    Wilson interval (probability_low, probability_high), and skipped (why there is no
    probability: no agent at risk in the bin).
    """
    transitions = cascade_transitions(tables, judge)
    conversations = done_conversations(tables).set_index("conversation_id")
    for factor in ("k", "n_agents"):
        if factor in conversations.columns:
            transitions[factor] = transitions["conversation_id"].map(conversations[factor])
    groups: list[tuple[str, str, pd.DataFrame]] = [("all", "all", transitions)]
    if "k" in transitions.columns:
        groups += [("all", str(k), group) for k, group in transitions.groupby("k", sort=True)]
        if "n_agents" in transitions.columns:
            groups += [
                (str(n), str(k), group)
                for (n, k), group in transitions.groupby(["n_agents", "k"], sort=True)
            ]
    rows = []
    for n_agents, k, group in groups:
        for label in BINS:
            in_bin = group[group["bin"] == label]
            n, conversions = len(in_bin), int(in_bin["converted"].sum())
            interval = wilson_interval(conversions, n)
            rows.append(
                {
                    "n_agents": n_agents,
                    "k": k,
                    "bin": label,
                    "n": n,
                    "conversions": conversions,
                    "probability": interval.estimate,
                    "probability_low": interval.low,
                    "probability_high": interval.high,
                    "skipped": "no agent at risk in this bin" if n == 0 else None,
                }
            )
    return pd.DataFrame(rows)
