"""The typed results of the Friedkin-Johnsen fit (`analysis.fit_influence`): the `influence`
section every paradigm's `Metrics` may carry."""

from __future__ import annotations

from backchannel.analysis._records import CellRow, IntervalRecord, Record


class InfluenceRow(CellRow):
    """The fit of one model on one channel in one cell of the design."""

    agent_model: str
    channel: str
    conversations: int
    agents: int
    transitions: int
    missing: int
    """Transitions (agent, round >= 1) left out because a value they need is missing."""
    susceptibility: IntervalRecord
    """a: the weight on the neighbours' expressed opinions."""
    stubbornness: IntervalRecord
    """s: the weight on the agent's initial opinion."""
    inertia: float | None
    """1 - a - s: the weight on the agent's own last opinion (negative: a + s > 1)."""
    rmse: float | None
    baseline_rmse: float | None
    """The error of the no-influence fit (a = 0), on the same transitions."""
    error_reduction: IntervalRecord
    """1 - SSE(FJ) / SSE(no influence): the share of the baseline's error the neighbours
    explain."""
    resamples: int
    seed: int
    skipped: str | None


class Influence(Record):
    """The Friedkin-Johnsen fit of a run: its form and one row per cell, model and channel."""

    form: str
    rows: list[InfluenceRow]
