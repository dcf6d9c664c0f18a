"""The kit's sections of a paradigm's typed metrics, filled from the paradigm's hooks after its
own `metrics()`: the one place `backchannel metrics`, `Run.metrics()`, the report and the
viewer's metrics get them from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.analysis import Metrics, RunTables
    from backchannel.paradigms._base import AnalysisOptions, Paradigm


def with_kit_sections(
    paradigm: Paradigm[Any],
    tables: RunTables,
    options: AnalysisOptions,
    metrics: Metrics | dict[str, Any],
) -> Metrics | dict[str, Any]:
    """`metrics` with the kit's sections filled from the paradigm's hooks (typed results only:
    a paradigm that returns a plain dict gets none)."""
    from backchannel.analysis import Design, Metrics, divergence

    if not isinstance(metrics, Metrics):
        return metrics
    pairs = paradigm.stance_pairs(tables, options)
    if pairs is None:
        return metrics
    section = divergence(pairs, Design.of(tables), tables.conversations)
    return metrics.model_copy(update={"divergence": section})
