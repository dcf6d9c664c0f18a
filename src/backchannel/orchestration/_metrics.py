"""A stored run's metrics: the paradigm's typed results under the analysis options, after
refusing options it does not read and judges the run lacks (for `Run.metrics`, `backchannel
metrics` and the report)."""

from __future__ import annotations

from functools import partial
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
    from backchannel.analysis import Metrics
    from backchannel.paradigms import kit_sections

    # The metrics share one decoding of the run's events (`reuse`). The kit's sections read
    # only the tables: on a large run they are computed in a forked copy of this process while
    # this one computes the paradigm's own sections.
    kit_work = partial(kit_sections, paradigm, tables, options)
    with tables.reuse(), tables.beside(kit_work) as kit:
        metrics = paradigm.metrics(tables, options)
        if not isinstance(metrics, Metrics):
            return metrics
        return metrics.model_copy(update=kit.result())
