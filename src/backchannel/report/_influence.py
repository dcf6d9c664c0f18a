"""The report's Friedkin-Johnsen section, one layout for every paradigm whose metrics carry an
`influence` fit: the form, one table row per cell, model and channel, and a figure of the
susceptibilities with their intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from backchannel.analysis import Influence
    from backchannel.report._html import Report

HEADING = "Influence (Friedkin-Johnsen)"


def influence_frame(influence: Influence) -> pd.DataFrame:
    """The fit's rows as one tidy table: factors, model, channel, counts, then each weight
    with its interval, the errors and the reason a row was skipped."""
    rows: list[dict[str, Any]] = []
    for row in influence.rows:
        record: dict[str, Any] = {**row.cell, "model": row.agent_model, "channel": row.channel}
        record.update(conversations=row.conversations, transitions=row.transitions)
        for name in ("susceptibility", "stubbornness"):
            interval = getattr(row, name)
            record.update(
                {
                    name: interval.estimate,
                    f"{name}_low": interval.low,
                    f"{name}_high": interval.high,
                }
            )
        record.update(inertia=row.inertia, rmse=row.rmse, baseline_rmse=row.baseline_rmse)
        reduction = row.error_reduction
        record.update(
            error_reduction=reduction.estimate,
            error_reduction_low=reduction.low,
            error_reduction_high=reduction.high,
            missing=row.missing,
            skipped=row.skipped or reduction.skipped,
        )
        rows.append(record)
    return pd.DataFrame(rows)


def influence_section(report: Report, influence: Influence) -> None:
    """Add the section: what was fitted, the table and (when any row was fitted) the figure."""
    report.section(
        HEADING,
        f"Per cell, model and channel: {influence.form}, where m(t) is the mean of the "
        "neighbours' latest expressed opinions the agent had seen when its round-t opinion was "
        "read. a is the susceptibility (weight on the neighbours), s the stubbornness (weight "
        "on the initial opinion), 1 − a − s the inertia; bounded least squares, 95 % "
        "percentile bootstrap over conversations. The error reduction is the share of the "
        "no-influence fit's (a = 0) squared error the neighbours explain. A classical "
        "baseline: it describes how opinions moved, not why.",
    )
    frame = influence_frame(influence)
    keys = [c for c in frame.columns if c not in _MEASURES] + ["channel"]
    weights = [*keys, "conversations", "transitions", *_WEIGHTS]
    errors = [*keys, "inertia", "rmse", "baseline_rmse", *_ERRORS, "missing", "skipped"]
    report.table("influence", frame[weights], "Susceptibility a and stubbornness s, 95 % intervals")
    report.table(
        "influence_error",
        frame[errors],
        "Inertia 1 − a − s; root-mean-square errors of the fit and of the no-influence fit "
        "(a = 0); the share of the latter's squared error the neighbours explain",
    )
    fitted = frame[frame["susceptibility"].notna() & frame["susceptibility_low"].notna()]
    if fitted.empty:
        return
    from backchannel.report._figures import bar_with_intervals

    factors = [c for c in frame.columns if c not in _MEASURES]
    drawn = fitted.copy()
    drawn["group"] = [" · ".join(str(r[c]) for c in factors) for _, r in drawn.iterrows()]
    fig = bar_with_intervals(
        drawn,
        "group",
        "susceptibility",
        "susceptibility_low",
        "susceptibility_high",
        hue="channel",
        title="Susceptibility per cell and model",
        ylabel="a (weight on neighbours)",
        ylim=(0.0, 1.0),
    )
    report.figure(fig, "Susceptibility a with its 95 % bootstrap interval, per channel.")


_WEIGHTS = [
    "susceptibility",
    "susceptibility_low",
    "susceptibility_high",
    "stubbornness",
    "stubbornness_low",
    "stubbornness_high",
]
_ERRORS = ["error_reduction", "error_reduction_low", "error_reduction_high"]
_MEASURES = {
    "channel",
    "conversations",
    "transitions",
    "susceptibility",
    "susceptibility_low",
    "susceptibility_high",
    "stubbornness",
    "stubbornness_low",
    "stubbornness_high",
    "inertia",
    "rmse",
    "baseline_rmse",
    "error_reduction",
    "error_reduction_low",
    "error_reduction_high",
    "missing",
    "skipped",
}
