"""The kit's sections of a paradigm's typed metrics, filled from the paradigm's hooks after its
own `metrics()`: the one place `backchannel metrics`, `Run.metrics()`, the report and the
viewer's metrics get them from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

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
    from backchannel.analysis import Metrics

    if not isinstance(metrics, Metrics):
        return metrics
    return metrics.model_copy(update=kit_sections(paradigm, tables, options))


def kit_sections(
    paradigm: Paradigm[Any], tables: RunTables, options: AnalysisOptions
) -> dict[str, Any]:
    """The kit's sections of the run (validity; divergence and influence where the paradigm
    gives their inputs), by section name. They read only the tables, never the paradigm's own
    metrics, so they can be computed beside them."""
    from backchannel.analysis import Design, divergence

    sections: dict[str, Any] = {"validity": _validity(paradigm, tables)}
    pairs = paradigm.stance_pairs(tables, options)
    if pairs is not None:
        sections["divergence"] = divergence(pairs, Design.of(tables), tables.conversations)
    influence = _influence(paradigm, tables, options)
    if influence is not None:
        sections["influence"] = influence
    return sections


def _influence(paradigm: Paradigm[Any], tables: RunTables, options: AnalysisOptions) -> Any:
    """The Friedkin-Johnsen fit of the paradigm's opinion trajectories (None: it has none),
    per cell of the design and model, bootstrapped from the run's seed."""
    from backchannel.analysis import Design, fit_influence

    frame = paradigm.opinion_trajectories(tables, options)
    if frame is None:
        return None
    design = Design.of(tables)
    levels = design.levels(tables.done_conversations())
    seed = int(tables.manifest.get("seed") or 0)
    return fit_influence(frame, levels, design.factors, seed=seed)


def _validity(paradigm: Paradigm[Any], tables: RunTables) -> Any:
    """Awareness and the order checks of the paradigm's `order_answers` (a paradigm that
    cannot give them says why)."""
    from backchannel.analysis import validity
    from backchannel.errors import ConfigError

    answers: pd.DataFrame | str | None
    try:
        answers = paradigm.order_answers(tables)
    except ConfigError as error:
        answers = str(error)
    return validity(tables, answers)
