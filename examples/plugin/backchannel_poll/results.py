"""The poll's typed results: one row per cell of the run's design (every factor the experiment
file declares, the author's own ones included), so no factor is ever averaged over.

`yes_share_by_checkpoint` has a row per cell and checkpoint, `by_cell` a row per cell; the two
counts are whole-run tallies. The report and `backchannel metrics --json` read this model.
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

import backchannel as bc
from backchannel.analysis import Headline, HeadlineValue, cell_groups, jsonable, wilson_interval
from backchannel_poll.votes import ballots, vote_changes


class YesShare(bc.CellRow):
    """The share of one cell's readable ballots saying yes at one checkpoint (0: before the
    discussion, r: after round r), with its 95 % Wilson interval over ballots."""

    checkpoint: int
    yes_share: float | None
    low: float | None
    high: float | None
    n: int


class CellVotes(bc.CellRow):
    """One cell: its finished conversations, the share of agents whose last readable vote
    differs from their first (over `vote_change_n` agents), and its unreadable ballots."""

    conversations: int
    vote_change_rate: float | None
    vote_change_n: int
    unreadable_votes: int


class PollMetrics(bc.Metrics):
    """Every figure of a poll run (`backchannel metrics RUN --json`)."""

    run_level: ClassVar[frozenset[str]] = frozenset({"conversations", "unreadable_votes"})
    conversations: int
    unreadable_votes: int
    yes_share_by_checkpoint: list[YesShare]
    by_cell: list[CellVotes]

    def headline(self) -> Headline:
        """Per cell: the yes share at the first and the last checkpoint, and the change rate."""
        keys = list(dict.fromkeys(k for row in self.by_cell for k in row.cell))
        values = []
        for cell_row in self.by_cell:
            shares = [r for r in self.yes_share_by_checkpoint if r.cell == cell_row.cell]
            cell = {k: cell_row.cell.get(k) for k in keys}
            for label, share in (("before", shares[:1]), ("after", shares[-1:])):
                for row in share:
                    values.append(
                        HeadlineValue(
                            cell=cell,
                            measure=f"yes share {label} (checkpoint {row.checkpoint})",
                            estimate=row.yes_share,
                            low=row.low,
                            high=row.high,
                            n=row.n,
                        )
                    )
            values.append(
                HeadlineValue(
                    cell=cell,
                    measure="vote change rate",
                    estimate=cell_row.vote_change_rate,
                    n=cell_row.vote_change_n,
                    skipped=None if cell_row.vote_change_n else "no agent voted readably twice",
                )
            )
        return Headline(
            title="Private votes per cell",
            rows=values,
            index=keys,
            columns=[],
            note="Yes shares over readable ballots (Wilson 95 % intervals, ballots taken as "
            "independent); the change rate over agents with two readable votes.",
        )


def poll_metrics(tables: bc.RunTables) -> PollMetrics:
    """The figures of every cell of the run's design, from its finished conversations."""
    design = bc.Design.of(tables)
    done = tables.done_conversations()
    votes, pairs = ballots(tables), vote_changes(tables)
    shares: list[dict[str, object]] = []
    cells: list[dict[str, object]] = []
    for level, part in _cells(done, design):
        ids = set(part["conversation_id"].astype(str))
        own = votes[votes["conversation_id"].astype(str).isin(ids)]
        readable = own[own["status"] == "ok"]
        for _, group in readable.groupby("round", sort=True):
            interval = wilson_interval(int((group["vote"] == "yes").sum()), len(group))
            shares.append(
                {
                    **level,
                    "checkpoint": int(group["round"].iloc[0]),
                    "yes_share": interval.estimate,
                    "low": interval.low,
                    "high": interval.high,
                    "n": len(group),
                }
            )
        changed = pairs[pairs["conversation_id"].astype(str).isin(ids)]["changed"]
        cells.append(
            {
                **level,
                "conversations": len(ids),
                "vote_change_rate": float(changed.mean()) if len(changed) else None,
                "vote_change_n": len(changed),
                "unreadable_votes": int((own["status"] != "ok").sum()),
            }
        )
    figures = {
        "conversations": len(done),
        "unreadable_votes": int((votes["status"] != "ok").sum()),
        "yes_share_by_checkpoint": shares,
        "by_cell": cells,
    }
    return PollMetrics.build(jsonable(figures), design)


def _cells(done: pd.DataFrame, design: bc.Design) -> list[tuple[dict[str, object], pd.DataFrame]]:
    """(levels, conversations) of every cell of the design: the groups over all its factors."""
    if done.empty:
        return []
    return cell_groups(done, design.by(), design.levels(done))
