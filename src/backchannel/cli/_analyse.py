"""`backchannel metrics` and `backchannel report`: recomputed from stored events, no model calls."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from backchannel.analysis import RunTables
from backchannel.cli._common import friendly_errors, load_tables, out, paradigm_of
from backchannel.errors import ConfigError, RunDirectoryError
from backchannel.paradigms import AnalysisOptions, Paradigm


@friendly_errors
def metrics_command(
    run: Annotated[Path | None, typer.Argument(help="The run directory.")] = None,
    tables: Annotated[
        Path | None, typer.Option("--tables", help="Read exported tables from this directory.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge whose labels the metrics use.")
    ] = None,
    second_judge: Annotated[
        str | None, typer.Option("--second-judge", help="Second judge for agreement figures.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="The paradigm's decision threshold (council: tension)."),
    ] = None,
) -> None:
    """The paradigm's metrics of a run."""
    run_tables = load_tables(run, tables)
    paradigm = paradigm_of(run_tables)
    options = AnalysisOptions(judge=judge, second_judge=second_judge, threshold=threshold)
    figures = analyse(paradigm, run_tables, options)
    text = json.dumps(
        _finite(figures), indent=None if as_json else 2, default=_jsonable, allow_nan=False
    )
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def analyse(paradigm: Paradigm[Any], tables: RunTables, options: AnalysisOptions) -> dict[str, Any]:
    """The paradigm's metrics under `options`, after refusing options it does not read and
    judges the run lacks."""
    paradigm.check_options(options)
    judges = {"judge": options.judge, "second_judge": options.second_judge}
    check_judges(tables, {k: v for k, v in judges.items() if v})
    return paradigm.metrics(tables, options)


def check_judges(tables: RunTables, options: dict[str, str]) -> None:
    """A judge named on the command line must have labels in the run."""
    present = sorted(str(j) for j in tables.labels["judge"].dropna().unique())
    for option, name in options.items():
        if name not in present:
            listed = ", ".join(present) if present else "none (this run has no judge labels)"
            raise ConfigError(
                f"--{option.replace('_', '-')} {name}: no labels of that judge in the run; "
                f"judges in the run: {listed}"
            )


def _finite(value: object) -> object:
    """NaN and infinities become null, so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic | np.ndarray):
        return _finite(value.tolist())
    return value


def _jsonable(value: object) -> object:
    if hasattr(value, "item"):
        return value.item()  # numpy scalars
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


@friendly_errors
def report_command(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Directory for the report (default RUN/report)."),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge whose labels the report uses.")
    ] = None,
    second_judge: Annotated[
        str | None, typer.Option("--second-judge", help="Second judge for agreement figures.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="The paradigm's decision threshold (council: tension)."),
    ] = None,
) -> None:
    """Write a self-contained HTML report with figures, and its tables as CSV beside it."""
    from backchannel.backends import SMALL_MODEL_WARNING
    from backchannel.report import Report

    if output is not None and output.exists() and not output.is_dir():
        raise RunDirectoryError(f"{output} is a file; pass a directory with -o")
    run_tables = load_tables(run, None)
    paradigm = paradigm_of(run_tables)
    options = AnalysisOptions(judge=judge, second_judge=second_judge, threshold=threshold)
    figures = analyse(paradigm, run_tables, options)
    manifest = run_tables.manifest
    report = Report(
        f"{manifest.get('name', run.name)}: {paradigm.name}",
        f"run {manifest.get('run_id')} · {len(run_tables.conversations)} conversations",
    )
    if (run_tables.events["model"] == "local/smollm2").any():
        report.note(SMALL_MODEL_WARNING)
    paradigm.report(run_tables, figures, report)
    path = report.write(output or run / "report")
    out.print(f"report: {path.resolve()}")
