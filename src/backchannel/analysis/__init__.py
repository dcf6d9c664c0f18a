"""Tidy tables and shared statistics: everything after the run store, pure and recomputable."""

from backchannel.analysis._json import finite_or_none, jsonable
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
    decode_json,
)

__all__ = [
    "CONVERSATION_BASE_COLUMNS",
    "EVENT_COLUMNS",
    "LABEL_COLUMNS",
    "Interval",
    "RunTables",
    "bootstrap_mean_ci",
    "decode_json",
    "finite_or_none",
    "jsonable",
    "paired_bootstrap_diff_ci",
    "t_mean_ci",
]
