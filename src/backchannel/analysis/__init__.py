"""Tidy tables and shared statistics: everything after the run store, pure and recomputable."""

from backchannel.analysis._stats import (
    Interval,
    bootstrap_mean_ci,
    paired_bootstrap_diff_ci,
    t_mean_ci,
)
from backchannel.analysis._tables import (
    CONVERSATION_BASE_COLUMNS,
    EVENT_COLUMNS,
    LABEL_COLUMNS,
    RunTables,
)

__all__ = [
    "CONVERSATION_BASE_COLUMNS",
    "EVENT_COLUMNS",
    "LABEL_COLUMNS",
    "Interval",
    "RunTables",
    "bootstrap_mean_ci",
    "paired_bootstrap_diff_ci",
    "t_mean_ci",
]
