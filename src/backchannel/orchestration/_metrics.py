"""A stored run's metrics: the paradigm's typed results under the analysis options, after
refusing options it does not read and judges the run lacks (for `Run.metrics`, `backchannel
metrics` and the report)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.analysis import Metrics, RunTables
    from backchannel.paradigms import AnalysisOptions, Paradigm


def compute_metrics(
    paradigm: Paradigm[Any], tables: RunTables, options: AnalysisOptions
) -> Metrics | dict[str, Any]:
    """The paradigm's metrics under `options`, after refusing options it does not read and
    judges the run lacks."""
    paradigm.check_options(options)
    judges = {"judge": options.judge, "second_judge": options.second_judge}
    present = set(str(j) for j in tables.labels["judge"].dropna().unique())
    for option, name in judges.items():
        if name and name not in present:
            listed = ", ".join(sorted(present)) or "none (this run has no judge labels)"
            raise ConfigError(
                f"--{option.replace('_', '-')} {name}: no labels of that judge in the run; "
                f"judges in the run: {listed}"
            )
    with tables.reuse():  # the metrics share one decoding of the run's events
        figures = paradigm.metrics(tables, options)
        return with_influence(paradigm, tables, options, figures)


def with_influence(
    paradigm: Paradigm[Any],
    tables: RunTables,
    options: AnalysisOptions,
    figures: Metrics | dict[str, Any],
) -> Metrics | dict[str, Any]:
    """`figures` with the Friedkin-Johnsen fit of the paradigm's opinion trajectories as its
    `influence` section (unchanged when the paradigm has no such hook or untyped results)."""
    from backchannel.analysis import Design, Metrics, fit_influence

    if not isinstance(figures, Metrics):
        return figures
    frame = paradigm.opinion_trajectories(tables, options)
    if frame is None:
        return figures
    design = Design.of(tables)
    levels = design.levels(tables.done_conversations())
    seed = int(tables.manifest.get("seed") or 0)
    influence = fit_influence(frame, levels, design.factors, seed=seed)
    return figures.model_copy(update={"influence": influence})
