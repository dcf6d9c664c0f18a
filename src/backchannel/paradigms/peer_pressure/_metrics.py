"""Every peer-pressure metric of a run, gathered into one JSON-able mapping.

This is what `backchannel metrics RUN --json` prints; each entry comes from a pure function
over the tidy tables (see docs/paradigms/peer_pressure_metrics.md for the definitions).
"""

from __future__ import annotations

from typing import Any

from backchannel.analysis import RunTables, jsonable
from backchannel.judges import confusion_mapping
from backchannel.paradigms.peer_pressure._agreement import (
    CHANNELS,
    judge_agreement,
    reweighted_fpi,
)
from backchannel.paradigms.peer_pressure._base import cell_columns, failure_counts
from backchannel.paradigms.peer_pressure._cascade import cascade
from backchannel.paradigms.peer_pressure._dyad import group_vs_dyad
from backchannel.paradigms.peer_pressure._infection import (
    SEED,
    across_cells,
    fpi_by_cell,
    time_course,
    time_course_summary,
)
from backchannel.paradigms.peer_pressure._network import network_metrics
from backchannel.paradigms.peer_pressure._pairing import (
    PAIRINGS,
    carry_over,
    paired_turns,
    pairing_by_cell,
    pairing_summary,
    self_internalisation,
)
from backchannel.paradigms.peer_pressure._reask import reask


def compute_metrics(
    tables: RunTables, judge: str, second_judge: str | None = None, *, seed: int = SEED
) -> dict[str, Any]:
    """All metrics under `judge`; with `second_judge`, also agreement and reweighted FPI."""
    with tables.reuse():
        return _compute(tables, judge, second_judge, seed)


def _compute(tables: RunTables, judge: str, second_judge: str | None, seed: int) -> dict[str, Any]:
    cells = cell_columns(tables)
    by_cell = fpi_by_cell(tables, judge, seed=seed)
    course = time_course(tables, judge)
    metrics: dict[str, Any] = {
        "judge": judge,
        "cell_factors": cells,
        "failures": failure_counts(tables, judge),
        "fpi": {
            "by_cell": by_cell,
            "across_cells": {
                "fpi": across_cells(by_cell, "fpi"),
                "initial": across_cells(by_cell, "initial"),
            },
        },
        "time_course": {
            "by_checkpoint": course,
            "by_cell": time_course_summary(course, cells) if not course.empty else [],
        },
        "pairings": {
            pairing: pairing_summary(paired_turns(tables, judge, pairing)) for pairing in PAIRINGS
        },
        "turns_by_cell": pairing_by_cell(tables, judge, "main"),
        "carry_over": carry_over(tables, judge),
        "self_internalisation": self_internalisation(tables, judge),
        "cascade": cascade(tables, judge),
        "group_vs_dyad": group_vs_dyad(tables, judge, seed=seed),
        "reask": reask(tables, judge),
        "network": network_metrics(tables, judge),
    }
    if second_judge is not None:
        agreement: dict[str, Any] = {"judge_a": judge, "judge_b": second_judge}
        for channel in CHANNELS:
            result = judge_agreement(tables, judge, second_judge, channel)
            result["confusion"] = confusion_mapping(result["confusion"])
            agreement[channel] = result
        agreement["reweighted_fpi"] = reweighted_fpi(tables, judge, second_judge, seed=seed)
        metrics["judge_agreement"] = agreement
    return jsonable(metrics)
