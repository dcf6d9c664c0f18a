"""`backchannel metrics` and `backchannel report`: recomputed from stored events, no model calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from backchannel._collector import collector_paused
from backchannel.cli._common import err, friendly_errors, load_tables, out, paradigm_of
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

# The analysis options (AnalysisOptions) as flags; `metrics` and `report` take the same ones.
JudgeOption = Annotated[
    str | None, typer.Option("--judge", help="Judge whose labels the metrics use.")
]
SecondJudgeOption = Annotated[
    str | None, typer.Option("--second-judge", help="Second judge for agreement figures.")
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--threshold", help="The paradigm's decision threshold, where it has one."),
]


@friendly_errors
def metrics_command(
    run: Annotated[Path | None, typer.Argument(help="The run directory.")] = None,
    tables: Annotated[
        Path | None, typer.Option("--tables", help="Read exported tables from this directory.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (default: readable tables).")
    ] = False,
    judge: JudgeOption = None,
    second_judge: SecondJudgeOption = None,
    threshold: ThresholdOption = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Every section in full (default: long ones shortened).")
    ] = False,
    section: Annotated[
        str | None, typer.Option("--section", help="Only this section, in full.")
    ] = None,
    compare_study: Annotated[
        bool,
        typer.Option(
            "--compare-study",
            help="The source study's published values beside the run's estimates.",
        ),
    ] = False,
) -> None:
    """The paradigm's metrics of a run: its headline table first, then every section."""
    from backchannel.analysis import jsonable
    from backchannel.orchestration import compute_metrics
    from backchannel.paradigms import AnalysisOptions

    with collector_paused():
        run_tables = load_tables(run, tables)
        paradigm = paradigm_of(run_tables)
        options = AnalysisOptions(judge=judge, second_judge=second_judge, threshold=threshold)
        require_conversations(run_tables, run if run is not None else tables)
        warn_unusable(run_tables)
        figures = compute_metrics(paradigm, run_tables, options)
    text = json.dumps(jsonable(figures), default=str, allow_nan=False)
    if as_json:
        out.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    from backchannel.analysis import Metrics
    from backchannel.backends import model_caveat
    from backchannel.cli._metrics_view import print_metrics, section_names
    from backchannel.orchestration import run_models

    data = json.loads(text)
    if section is not None and section not in data:
        raise ConfigError(
            f"--section {section}: no such section; the run's sections are "
            f"{', '.join(section_names(data))}"
        )
    headline = figures.headline() if isinstance(figures, Metrics) else None
    comparison = _study_comparison(paradigm, headline) if compare_study else None
    print_metrics(
        out,
        data,
        model_caveat(run_models(run_tables)),
        headline=headline,
        comparison=comparison,
        only=section,
        everything=everything,
    )


def _study_comparison(paradigm: Any, headline: Any) -> Any:
    """The study's published values beside the run's headline, as a printable section."""
    from backchannel.analysis import compare_study, comparison_frame
    from backchannel.cli._metrics_view import Section

    study = paradigm.study()
    if study is None:
        raise ConfigError(
            f"--compare-study: the {paradigm.name} paradigm ships no study values "
            "(a study.yaml in its folder)"
        )
    if headline is None:
        raise ConfigError(
            f"--compare-study: the {paradigm.name} paradigm's metrics have no headline table "
            "to compare with"
        )
    frame = comparison_frame(compare_study(headline, study))
    rows = [{str(k): v for k, v in r.items()} for r in frame.to_dict(orient="records")]
    keys = ["measure", "cell"]
    others = [c for c in frame.columns if c not in keys]
    return Section(f"Beside the study: {study.citation}", keys, others, rows, 0, [study.note])


def require_conversations(tables: RunTables, where: Path | None) -> None:
    """Refuse to measure a run that stored no conversation with events yet: that, not a missing
    judge or an empty metric, is then what the user must hear."""
    from backchannel.errors import RunDirectoryError

    conversations = tables.conversations
    status = conversations.get("status")
    failed = 0 if status is None else int((status == "failed").sum())
    if len(conversations) - failed > 0:
        return
    retry = (
        f" ({failed} failed and kept only their error: run the same `backchannel run` again to "
        "retry them)"
        if failed
        else " (none has finished: a run killed early keeps none; run or resume it with "
        "`backchannel run EXPERIMENT.yaml -o RUN`)"
    )
    raise RunDirectoryError(f"{where} holds no conversations to measure{retry}")


def warn_unusable(tables: RunTables) -> str | None:
    """Say on stderr when most model answers are unusable: that, not a judge or a metric, is
    then why figures are missing."""
    from backchannel.store import tables_answer_quality, unusable_message

    message = unusable_message(tables_answer_quality(tables))
    if message:
        err.print(f"[yellow]warning:[/] {message}", soft_wrap=True)
    return message


@friendly_errors
def report_command(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Directory for the report (default RUN/report)."),
    ] = None,
    judge: JudgeOption = None,
    second_judge: SecondJudgeOption = None,
    threshold: ThresholdOption = None,
    viewer: Annotated[
        str | None,
        typer.Option(
            "--viewer",
            help="Where the report's numbers link to: the viewer's URL, or a static copy "
            "(`backchannel view RUN --static DIR`: pass DIR). Default: http://127.0.0.1:8765/, "
            "where `backchannel view RUN` serves.",
        ),
    ] = None,
) -> None:
    """Write a self-contained HTML report with figures, and its tables as CSV beside it."""
    from backchannel.orchestration import write_report
    from backchannel.paradigms import AnalysisOptions
    from backchannel.store import incomplete_summary

    with collector_paused():
        run_tables = load_tables(run, None)
        options = AnalysisOptions(judge=judge, second_judge=second_judge, threshold=threshold)
        paradigm_of(run_tables)
        require_conversations(run_tables, run)
        warn_unusable(run_tables)
        path = write_report(
            paradigm_of(run_tables),
            run_tables,
            options,
            output or run / "report",
            title=run.name,
            viewer=viewer,
        )
    out.print(f"report: {path.resolve()}")
    partial = incomplete_summary(run_tables.manifest.get("run_state"))
    if partial:
        err.print(f"[yellow]note:[/] {partial}")
