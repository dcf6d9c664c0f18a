"""The poll's ballots as tables: what its metrics, report and view all read (one computation)."""

from __future__ import annotations

import pandas as pd

import backchannel as bc


def ballots(tables: bc.RunTables) -> pd.DataFrame:
    """One row per ballot of a finished conversation, with its parsed vote (None if unreadable)."""
    done = tables.conversations.loc[tables.conversations["status"] == "done", "conversation_id"]
    events = tables.events
    votes = events[(events["kind"] == "probe") & (events["name"] == "vote")]
    votes = votes[votes["conversation_id"].isin(done)].copy()
    votes["vote"] = votes["value"].map(lambda v: None if v in (None, "") else str(v).strip('"'))
    return votes


def vote_changes(tables: bc.RunTables) -> pd.DataFrame:
    """Per agent of each finished conversation: its first and last readable vote (at two
    different checkpoints) and whether it changed; the metrics' change rate is their mean."""
    votes = ballots(tables)
    readable = votes[votes["status"] == "ok"]
    first = readable.loc[readable.groupby(["conversation_id", "agent"])["round"].idxmin()]
    last = readable.loc[readable.groupby(["conversation_id", "agent"])["round"].idxmax()]
    pairs = first.merge(last, on=["conversation_id", "agent"], suffixes=("_first", "_last"))
    pairs = pairs[pairs["round_first"] < pairs["round_last"]]
    return pairs.assign(changed=pairs["vote_first"] != pairs["vote_last"])
