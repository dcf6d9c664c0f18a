"""The report's "Say versus believe" section, in one layout for every paradigm: drawn from the
`divergence` section of the typed metrics (docs/divergence.md), never by a paradigm itself."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from backchannel.analysis import Divergence, DivergenceRow
    from backchannel.report._html import Report

HEADING = "Say versus believe"
SHARES = ("agree", "hidden_change", "public_accommodation", "both_moved", "divergent")
INTRO = (
    "Each public turn beside the same agent's nearest private answer on the same question, "
    "each read as moved toward the pressure from the agent's own starting point or not. Hidden "
    "change: the private answer moved, the public stance did not. Public accommodation: the "
    "public stance moved, the private answer did not. A divergent turn is either. Shares are "
    "over the classified pairs (n) of each cell, round and role; the skipped pairs are counted "
    "with their reasons. Intervals: Wilson 95 % at the effective size that the clustering of "
    "pairs in conversations leaves (design effect)."
)


def divergence_section(report: Report, section: Divergence) -> None:
    """Add the section: the shares per cell, round and role, the skipped pairs by reason, and
    the tests between cells."""
    report.section(HEADING, INTRO)
    if not section.by_cell:
        report.note("No stance pairs: no finished conversation has a public turn to pair.")
        return
    report.table(
        "divergence",
        shares_frame(section.by_cell),
        f"Shares of the classified pairs, 95 % intervals ({section.interval})",
    )
    figure = course_frame(section.by_cell)
    if not figure.empty:
        from backchannel.report._figures import line_over_rounds

        fig = line_over_rounds(
            figure,
            "round",
            "share",
            "cell",
            title="Hidden change and public accommodation by round",
            ylabel="share of classified pairs",
            band_low="low",
            band_high="high",
            facet="measure",
            ylim=(0.0, 1.0),
        )
        report.figure(
            fig,
            "Hidden change and public accommodation per round, one line per cell and role, "
            "with 95 % intervals (shaded)",
            data=figure,
        )
    skipped = skipped_frame(section.by_cell)
    if not skipped.empty:
        report.table("divergence_skipped", skipped, "Pairs that could not be classified, by reason")
    if section.tests:
        report.table(
            "divergence_tests",
            comparisons_frame(section),
            "Between cells that differ in one factor, per role, over rounds: a conversation's "
            "share is the unit; Wilcoxon signed-rank when the cells share items and "
            "replicates (paired by them), else Mann-Whitney U; p Holm-adjusted over the table",
        )


def shares_frame(rows: list[DivergenceRow]) -> pd.DataFrame:
    """One row per cell, round and role: its counts and each share with its interval."""
    records = []
    for row in rows:
        record: dict[str, Any] = {
            **row.cell,
            "round": row.round,
            "role": row.role,
            "pairs": row.pairs,
            "n": row.n,
            "skipped": sum(row.skipped.values()),
            "conversations": row.conversations,
        }
        for name in SHARES:
            interval = getattr(row, name)
            record[f"{name}_share"] = interval.estimate
            record[f"{name}_share_low"] = interval.low
            record[f"{name}_share_high"] = interval.high
        records.append(record)
    return pd.DataFrame(records)


def course_frame(rows: list[DivergenceRow]) -> pd.DataFrame:
    """The two directions of divergence per cell, role and round, for the figure: one line per
    cell and role (`cell`), one panel per measure."""
    records = []
    roles = {row.role for row in rows}
    for row in rows:
        label = _levels(row.cell) or "run"
        if len(roles) > 1:
            label = f"{label} · {row.role}"
        for name in ("hidden_change", "public_accommodation"):
            interval = getattr(row, name)
            if interval.estimate is None:
                continue
            records.append(
                {
                    **row.cell,
                    "role": row.role,
                    "cell": label,
                    "measure": name.replace("_", " "),
                    "round": row.round,
                    "share": interval.estimate,
                    # no interval (fewer than two conversations): no band, never a zero-width one
                    "low": interval.low if interval.low is not None else float("nan"),
                    "high": interval.high if interval.high is not None else float("nan"),
                }
            )
    return pd.DataFrame(records)


def skipped_frame(rows: list[DivergenceRow]) -> pd.DataFrame:
    """The skipped pairs per cell, round, role and reason."""
    records = [
        {**row.cell, "round": row.round, "role": row.role, "reason": reason, "pairs": count}
        for row in rows
        for reason, count in row.skipped.items()
    ]
    return pd.DataFrame(records)


def _levels(cell: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in cell.items())


def comparisons_frame(section: Divergence) -> pd.DataFrame:
    """One row per test between two cells."""
    return pd.DataFrame(
        [
            {
                "factor": test.factor,
                "first": _levels(test.first),
                "second": _levels(test.second),
                "role": test.role,
                "measure": test.measure,
                "difference": test.difference,
                "test": test.test,
                "paired": test.paired,
                "n": test.n,
                "missing": test.missing,
                "p_value": test.p_value,
                "p_holm": test.p_holm,
                "skipped": test.skipped,
            }
            for test in section.tests
        ]
    )
