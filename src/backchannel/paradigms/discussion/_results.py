"""The discussion's typed results: what `metrics` returns and the report and `--json` read.

`by_cell` has one row per cell of the run's design (every declared factor a key of every row,
so no factor is averaged over); `per_conversation` one row per conversation, whose id names its
cell; the two counts are whole-run tallies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from backchannel.analysis import CellRow, IntervalRecord, Metrics, Record

if TYPE_CHECKING:
    from backchannel.analysis import Headline


Interval = IntervalRecord
"""A bootstrap interval (the shared typed form)."""


class CellFigures(CellRow):
    """One cell: its conversations with probes, the two rates' means and its failed probes."""

    conversations: int
    answer_change_rate: Interval
    final_agreement: Interval
    failed_probes: int


class ConversationFigures(Record):
    """One conversation: its agents, change rate, final agreement and failed probes (a rate is
    null when nothing could be compared)."""

    conversation_id: str
    agents: int
    answer_change_rate: float | None
    final_agreement: float | None
    failed_probes: int


class DiscussionMetrics(Metrics):
    """Every discussion metric of a run (`backchannel metrics RUN --json`)."""

    run_level: ClassVar[frozenset[str]] = frozenset(
        {"conversations", "failed_probes", "per_conversation"}
    )
    conversations: int
    """Conversations with at least one private answer (failed ones included)."""
    failed_probes: int
    """Private answers that failed or could not be read, in every conversation."""
    by_cell: list[CellFigures]
    per_conversation: list[ConversationFigures]
    """Finer than any cell, not a pooled figure: each conversation's id names its cell."""

    def headline(self) -> Headline:
        """The answer change rate and final agreement of every cell."""
        from backchannel.analysis import Headline, HeadlineValue

        keys = list(dict.fromkeys(k for row in self.by_cell for k in row.cell))
        values = []
        for row in self.by_cell:
            cell = {k: row.cell.get(k) for k in keys}
            values += [
                HeadlineValue.of(cell, "answer change rate", row.answer_change_rate),
                HeadlineValue.of(cell, "final agreement", row.final_agreement),
            ]
        return Headline(
            title="Private answers per cell",
            rows=values,
            index=keys,
            columns=[],
            note="Means over conversations with 95 % bootstrap intervals: the share of agents "
            "whose last private answer differs from their first, and the share of last answers "
            "equal to the most common one.",
        )
