"""Tidy tables and shared statistics: everything after the run store, pure and recomputable."""

from backchannel.analysis._stats import (
    Interval,
    bootstrap_mean_ci,
    paired_bootstrap_diff_ci,
    t_mean_ci,
)

__all__ = ["Interval", "bootstrap_mean_ci", "paired_bootstrap_diff_ci", "t_mean_ci"]
