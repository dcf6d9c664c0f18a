"""Every peer-pressure metric of a run, gathered into the typed `PeerPressureMetrics`.

Its `as_json()` is what `backchannel metrics RUN --json` prints; each section comes from a pure
function over the tidy tables and groups by every factor the run declared (its `Design`), or
names in `pooled` the factors its own definition contrasts (see
docs/paradigms/peer_pressure_metrics.md for the definitions).
"""

from __future__ import annotations

from typing import Any

from backchannel.analysis import Design, RunTables, jsonable
from backchannel.judges import confusion_mapping
from backchannel.paradigms.peer_pressure._agreement import (
    CHANNELS,
    judge_agreement,
    reweighted_fpi,
)
from backchannel.paradigms.peer_pressure._base import failure_counts
from backchannel.paradigms.peer_pressure._cascade import cascade
from backchannel.paradigms.peer_pressure._cells import model_factors
from backchannel.paradigms.peer_pressure._dyad import group_vs_dyad
from backchannel.paradigms.peer_pressure._infection import (
    SEED,
    fpi_by_cell,
    time_course,
    time_course_summary,
)
from backchannel.paradigms.peer_pressure._network import network_metrics
from backchannel.paradigms.peer_pressure._pairing import (
    PAIRINGS,
    carry_over,
    pairing_by_cell,
    pairings_by_cell,
    self_internalisation,
)
from backchannel.paradigms.peer_pressure._reask import reask
from backchannel.paradigms.peer_pressure._results import PeerPressureMetrics


def compute_metrics(
    tables: RunTables, judge: str, second_judge: str | None = None, *, seed: int = SEED
) -> PeerPressureMetrics:
    """All metrics under `judge`; with `second_judge`, also agreement and reweighted FPI."""
    with tables.reuse():
        return _compute(tables, judge, second_judge, seed)


def pooled_factors(design: Design) -> dict[str, list[str]]:
    """The sections whose own definition contrasts a factor's levels, and those factors (only
    the ones this run declared)."""
    named = {
        "group_vs_dyad": design.pooled(["n_agents"]),
        "network.infection_by_model": model_factors(design),
    }
    return {section: factors for section, factors in named.items() if factors}


def _compute(
    tables: RunTables, judge: str, second_judge: str | None, seed: int
) -> PeerPressureMetrics:
    design = Design.of(tables)
    course = time_course(tables, judge)
    metrics: dict[str, Any] = {
        "pooled": pooled_factors(design),
        "judge": judge,
        "cell_factors": list(design.factors),
        "failures": failure_counts(tables, judge),
        "fpi": {"by_cell": fpi_by_cell(tables, judge, seed=seed)},
        "time_course": {
            "by_checkpoint": course,
            "by_cell": time_course_summary(course, list(design.factors)),
        },
        "pairings": {pairing: pairings_by_cell(tables, judge, pairing) for pairing in PAIRINGS},
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
    return PeerPressureMetrics.build(jsonable(metrics), design)
