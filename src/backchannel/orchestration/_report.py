"""The run's report stage: a stored run's self-contained HTML report (its figures, tables and
banners), shared by `Run.report` and `backchannel report`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.errors import RunDirectoryError
from backchannel.orchestration._metrics import compute_metrics

if TYPE_CHECKING:
    from backchannel.analysis import Headline, RunTables, Study
    from backchannel.paradigms import AnalysisOptions, Paradigm
    from backchannel.report import Report


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


def _validity(report: Report, figures: Any) -> None:
    """The shared "Validity" section, after the paradigm's own."""
    from backchannel.analysis import Metrics, Validity
    from backchannel.report import validity_section

    if isinstance(figures, Metrics) and isinstance(figures.validity, Validity):
        validity_section(report, figures.validity)


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
    from backchannel.store import incomplete_summary, tables_answer_quality, unusable_message

    figures = compute_metrics(paradigm, tables, options)
    manifest = tables.manifest
    report = Report(
        f"{manifest.get('name', title)}: {paradigm.name}",
        f"run {manifest.get('run_id')} · {len(tables.conversations)} conversations",
    )
    partial = incomplete_summary(manifest.get("run_state"))
    if partial:
        report.banner(partial)
    unusable = unusable_message(tables_answer_quality(tables))
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
    if isinstance(figures, Metrics) and figures.divergence is not None:
        from backchannel.report import divergence_section

        divergence_section(report, figures.divergence)
    if isinstance(figures, Metrics) and figures.influence is not None:
        from backchannel.report import influence_section

        influence_section(report, figures.influence)
    _validity(report, figures)
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
        labelled = set(tables.labels["model"].dropna().astype(str).unique().tolist())
        models |= {m for m in labelled if "/" in m or m.startswith("sim")}  # not "rule"
    return models
