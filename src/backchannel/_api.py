"""The Python front door: run an experiment and open a stored run from a script or notebook.

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

if TYPE_CHECKING:
    import pandas as pd

    from backchannel._runner import ProgressCallback
    from backchannel.analysis import Headline, Metrics, RunTables, Study
    from backchannel.experiment import LoadedExperiment
    from backchannel.paradigms import AnalysisOptions, Paradigm
    from backchannel.report import Report


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
) -> Run:
    """Run (or resume) an experiment into the run directory `output`; returns the stored run.

    Conversations whose calls failed after every retry are stored as incomplete and counted in
    `Run.counts`; calling again on the same directory retries them from the cache.
    """
    from backchannel import _runner

    loaded = (
        experiment
        if not isinstance(experiment, str | Path)
        else load_experiment(experiment, model=model)
    )
    if model is not None and not isinstance(experiment, str | Path):
        raise ValueError("pass `model` with a path; a loaded experiment already has its models")
    directory = Path(output)
    run_plan = _runner.plan(loaded, limit)
    _runner.check_models(run_plan, concurrency=concurrency)
    await _runner.acheck_reachable(run_plan)
    store = _runner.open_run_directory(directory, loaded)
    try:
        run_plan.done = store.finished_ids()
        _runner.record_plan(store, run_plan)
        await _runner.run_plan(
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
) -> Run:
    """`arun` for code that is not already inside an event loop."""
    return asyncio.run(arun(experiment, output, model=model, limit=limit, concurrency=concurrency))


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
            from backchannel.errors import ConfigError

            raise ConfigError(
                f"--{option.replace('_', '-')} {name}: no labels of that judge in the run; "
                f"judges in the run: {listed}"
            )
    with tables.reuse():  # the metrics share one decoding of the run's events
        return paradigm.metrics(tables, options)


def write_report(
    paradigm: Paradigm[Any],
    tables: RunTables,
    options: AnalysisOptions,
    output: Path,
    *,
    title: str,
    viewer: str | None = None,
) -> Path:
    """Write the self-contained HTML report (and its tables as CSV) into `output`; its numbers
    link to `viewer` (a URL or a static copy; default `backchannel view`'s address)."""
    if output.exists() and not output.is_dir():
        raise RunDirectoryError(f"{output} is a file; pass a directory with -o")
    with tables.reuse():
        return _write_report(paradigm, tables, options, output, title=title, viewer=viewer)


def _write_report(
    paradigm: Paradigm[Any],
    tables: RunTables,
    options: AnalysisOptions,
    output: Path,
    *,
    title: str,
    viewer: str | None = None,
) -> Path:
    from backchannel.backends import model_caveat
    from backchannel.report import Report
    from backchannel.store import answer_quality, incomplete_summary, unusable_message

    figures = compute_metrics(paradigm, tables, options)
    manifest = tables.manifest
    report = Report(
        f"{manifest.get('name', title)}: {paradigm.name}",
        f"run {manifest.get('run_id')} · {len(tables.conversations)} conversations",
    )
    partial = incomplete_summary(manifest.get("run_state"))
    if partial:
        report.banner(partial)
    unusable = unusable_message(answer_quality(tables.core_events))
    if unusable:
        report.banner(unusable[0].upper() + unusable[1:] + ".")
    caveat = model_caveat(run_models(tables))
    if caveat is not None:
        report.banner(caveat)
    from backchannel.analysis import Design, Metrics
    from backchannel.report import viewer_links

    report.link_to_viewer(viewer_links(Design.of(tables).factors, viewer, output))
    headline = figures.headline() if isinstance(figures, Metrics) else None
    if headline is not None:
        report.section(headline.title, headline.note or None)
        report.headline(headline, "The study's main table, from this run")
    paradigm.report(tables, figures, report)
    study = paradigm.study() if headline is not None else None
    if headline is not None and study is not None:
        _study_section(report, headline, study)
    try:
        return report.write(output)
    except OSError as error:
        raise RunDirectoryError(
            f"cannot write the report into {output} ({error.strerror or error}); pass a "
            "writable folder with -o"
        ) from None


def _study_section(report: Report, headline: Headline, study: Study) -> None:
    """The study's published values beside the run's estimates, cell by cell."""
    from backchannel.analysis import compare_study, comparison_frame

    report.section(
        "Beside the study",
        f"{study.citation}\n\nEach published value next to this run's estimate in the same "
        "cell, and whether it lies inside the run's 95 % interval. " + study.note,
    )
    report.table("study_comparison", comparison_frame(compare_study(headline, study)))


def run_models(tables: RunTables) -> set[str]:
    """Every model that answered in a run: its events' and its judge labels' models."""
    events = tables.core_events
    models = set(events["model"].dropna().astype(str)) if len(events) else set()
    if len(tables.labels) and "model" in tables.labels:
        labelled = set(tables.labels["model"].dropna().astype(str))
        models |= {m for m in labelled if "/" in m or m.startswith("sim")}  # not "rule"
    return models


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
