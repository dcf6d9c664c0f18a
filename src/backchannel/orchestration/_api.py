"""The Python front door: run an experiment and open a stored run (its tables and metrics) from
a script or notebook.

The CLI commands are thin wrappers over the same functions, so a notebook and the shell see the
same runs, the same errors and the same figures.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.errors import RunDirectoryError
from backchannel.orchestration._metrics import compute_metrics
from backchannel.orchestration._report import write_report

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import Metrics, RunTables
    from backchannel.experiment import LoadedExperiment
    from backchannel.orchestration._execute import ProgressCallback
    from backchannel.paradigms import AnalysisOptions, Paradigm


def load_experiment(path: str | Path, *, model: str | None = None) -> LoadedExperiment:
    """Read and validate an experiment file; `model` replaces every model in it (like --model)."""
    from backchannel.experiment import load_experiment as load

    return load(Path(path), model_override=model)


async def arun(
    experiment: LoadedExperiment | str | Path,
    output: str | Path,
    *,
    model: str | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    on_progress: ProgressCallback | None = None,
    until: str | None = None,
) -> Run:
    """Run (or resume) an experiment into the run directory `output`; returns the stored run.

    Conversations whose calls failed after every retry are stored as incomplete and counted in
    `Run.counts`; calling again on the same directory retries them from the cache. `until`
    (like `--until`, else the file's `stopping.until`) adds replicates in batches until the
    target holds; the looks are in the manifest's `stopping`.
    """
    from backchannel.orchestration import _checks, _directory, _execute, _plan, _until

    loaded = (
        experiment
        if not isinstance(experiment, str | Path)
        else load_experiment(experiment, model=model)
    )
    if model is not None and not isinstance(experiment, str | Path):
        raise ValueError("pass `model` with a path; a loaded experiment already has its models")
    directory = Path(output)
    run_plan = _plan.plan(loaded, limit)
    target = _until.requested_target(loaded, until, limit)
    _checks.check_models(run_plan, concurrency=concurrency)
    await _checks.acheck_reachable(run_plan)
    store = _directory.open_run_directory(directory, loaded)
    try:
        run_plan.done = store.finished_ids()
        stopping = _until.resolve_stopping(run_plan, target, store)
        _directory.record_plan(store, run_plan)
        if stopping is not None:
            await _until.run_until(
                run_plan,
                store,
                directory,
                stopping,
                _until.contrast_reader(loaded.paradigm, loaded.experiment.factors),
                concurrency=concurrency,
                on_progress=on_progress,
            )
        else:
            await _execute.run_plan(
                run_plan, store, directory, concurrency=concurrency, on_progress=on_progress
            )
    finally:
        store.close()
    return open_run(directory)


def run(
    experiment: LoadedExperiment | str | Path,
    output: str | Path,
    *,
    model: str | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    until: str | None = None,
) -> Run:
    """`arun` for code that is not already inside an event loop."""
    return asyncio.run(
        arun(experiment, output, model=model, limit=limit, concurrency=concurrency, until=until)
    )


def open_run(path: str | Path) -> Run:
    """A stored run directory, read-only: its manifest, tidy tables, metrics and report."""
    directory = Path(path)
    from backchannel.store import DATABASE_NAME

    if not (directory / DATABASE_NAME).is_file():
        raise RunDirectoryError(f"{directory} is not a run directory (no {DATABASE_NAME})")
    return Run(directory)


def analysis_options(
    judge: str | None = None, second_judge: str | None = None, threshold: float | None = None
) -> AnalysisOptions:
    from backchannel.paradigms import AnalysisOptions

    return AnalysisOptions(judge=judge, second_judge=second_judge, threshold=threshold)


@dataclass
class Run:
    """One stored run. Tables follow the export schema (docs/data-schema.md) and are read once."""

    path: Path

    @cached_property
    def tables(self) -> RunTables:
        from backchannel.store import RunStore

        store = RunStore(self.path, readonly=True)
        try:
            return store.tables()
        finally:
            store.close()

    @property
    def manifest(self) -> dict[str, Any]:
        return self.tables.manifest

    @property
    def events(self) -> pd.DataFrame:
        return self.tables.events

    @property
    def labels(self) -> pd.DataFrame:
        return self.tables.labels

    @property
    def conversations(self) -> pd.DataFrame:
        return self.tables.conversations

    @property
    def counts(self) -> dict[str, int]:
        """Conversations by status: done, incomplete, failed."""
        statuses = self.conversations["status"].value_counts()
        return {s: int(statuses.get(s, 0)) for s in ("done", "incomplete", "failed")}

    def _repr_html_(self) -> str:
        from backchannel._run_display import run_summary_html

        return run_summary_html(self.path)

    @cached_property
    def paradigm(self) -> Paradigm[Any]:
        from backchannel.paradigms import get_paradigm

        name = self.manifest.get("paradigm")
        if not name:
            raise RunDirectoryError(f"{self.path}: the run has no manifest naming its paradigm")
        return get_paradigm(str(name))

    def metrics(
        self,
        *,
        judge: str | None = None,
        second_judge: str | None = None,
        threshold: float | None = None,
    ) -> Metrics | dict[str, Any]:
        """The paradigm's typed results (`as_json()` is what `backchannel metrics RUN --json`
        prints)."""
        options = analysis_options(judge, second_judge, threshold)
        return compute_metrics(self.paradigm, self.tables, options)

    def report(
        self,
        output_dir: str | Path | None = None,
        *,
        judge: str | None = None,
        second_judge: str | None = None,
        threshold: float | None = None,
        viewer: str | None = None,
    ) -> Path:
        """Write the HTML report (default RUN/report); returns the path of report.html. Its
        numbers link to `viewer`: a URL, or a static copy (default `backchannel view`'s)."""
        options = analysis_options(judge, second_judge, threshold)
        output = Path(output_dir) if output_dir is not None else self.path / "report"
        return write_report(
            self.paradigm, self.tables, options, output, title=self.path.name, viewer=viewer
        )
