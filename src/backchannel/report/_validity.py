"""The report's "Validity" section, the same for every paradigm: experiment awareness and the
order checks from `Metrics.validity` (definitions in docs/validity.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from backchannel.analysis import Validity
    from backchannel.report._html import Report

INTRO = (
    "Checks a reviewer asks for. Awareness: the share of agents whose answer to the final "
    "private question about what the study tests names its manipulation (judge `awareness`), "
    "with a 95 % Wilson interval. Order: how often an answer is the first option shown, or the "
    "position of the first or the last speaker before it, against the rate chance predicts, "
    "with an exact two-sided test (binomial, or Poisson-binomial where answers differ in "
    "their chance)."
)


def _counts(counts: dict[str, int]) -> str:
    return "; ".join(f"{reason}: {n}" for reason, n in counts.items())


def validity_section(report: Report, validity: Validity) -> None:
    """Add the "Validity" section: one table per check, or why there is none."""
    report.section("Validity", INTRO)
    if validity.awareness:
        frame = pd.DataFrame([row.model_dump(mode="json") for row in validity.awareness])
        frame["failures"] = [_counts(row.failures) for row in validity.awareness]
        report.table(
            "validity_awareness",
            frame,
            "Experiment awareness per cell and role: aware answers over judged ones "
            "(effects a model can guess are suspect).",
        )
    else:
        report.note(f"Awareness: {validity.awareness_skipped}.")
    if validity.order:
        frame = pd.DataFrame([row.model_dump(mode="json") for row in validity.order])
        frame["excluded"] = [_counts(row.excluded) for row in validity.order]
        report.table(
            "validity_order",
            frame,
            "Position and order effects per cell: hits of each check against chance.",
        )
    else:
        report.note(f"Order effects: {validity.order_skipped}.")
