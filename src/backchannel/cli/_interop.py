"""`backchannel export --format inspect|hf` (dispatched from `export`) and `backchannel query`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from backchannel.cli._common import err, friendly_errors, out


def export_interop(run: Path, output: Path, fmt: Any, *, force: bool) -> None:
    """Write the run as Inspect logs or a Hugging Face dataset, and print what was written."""
    from backchannel.interop import export_run
    from backchannel.store import incomplete_summary

    exported = export_run(run, output, fmt, force=force)
    for path in exported.paths:
        out.print(str(path), soft_wrap=True, markup=False, highlight=False)
    for note in exported.notes:
        err.print(f"note: {note}", markup=False, soft_wrap=True)
    partial = incomplete_summary(exported.run_state)
    if partial:
        err.print(f"[yellow]note:[/] {partial}", soft_wrap=True)


@friendly_errors
def query_command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Run directories or Parquet exports (backchannel export -o DIR)."),
    ],
    sql: Annotated[
        str,
        typer.Option(
            "--sql",
            help="One SQL query over the views events, labels, conversations, runs (and "
            "paradigm tables such as citations); every view has a `run` column.",
        ),
    ],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the result as CSV.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON records.")
    ] = False,
) -> None:
    """Query several runs at once with SQL (DuckDB; pip install 'backchannel[query]')."""
    from backchannel.errors import ConfigError
    from backchannel.interop import need, open_runs

    if as_csv and as_json:
        raise ConfigError("give --csv or --json, not both")
    need("duckdb")
    with open_runs(runs) as opened:
        result = opened.sql(sql)
    if as_json:
        import json

        from backchannel.analysis import jsonable

        typer.echo(json.dumps(jsonable(result)))  # data, printed as is (no rich markup or emoji)
    elif as_csv:
        typer.echo(result.to_csv(index=False), nl=False)
    else:
        import pandas as pd

        with pd.option_context(
            "display.max_rows",
            None,
            "display.max_columns",
            None,
            "display.width",
            200,
            "display.max_colwidth",
            80,
        ):
            text = result.to_string(index=False) if len(result.columns) else "(no columns)"
        typer.echo(text)
        typer.echo("(1 row)" if len(result) == 1 else f"({len(result)} rows)")
