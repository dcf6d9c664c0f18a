"""The `backchannel` command: one module per command, registered here."""

from __future__ import annotations

import typer

from backchannel.cli._analyse import metrics_command, report_command
from backchannel.cli._interop import query_command
from backchannel.cli._judge import agree_command, judge_command
from backchannel.cli._plan import plan_command
from backchannel.cli._run import run_command
from backchannel.cli._screen import screen_command
from backchannel.cli._status import export_command, status_command
from backchannel.cli._view import view_command

app = typer.Typer(
    name="backchannel",
    help="Multi-agent LLM experiments that record public talk and private belief.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(run_command)
app.command("plan")(plan_command)
app.command("status")(status_command)
app.command("export")(export_command)
app.command("metrics")(metrics_command)
app.command("report")(report_command)
app.command("judge")(judge_command)
app.command("agree")(agree_command)
app.command("screen")(screen_command)
app.command("view")(view_command)
app.command("query")(query_command)


__all__ = ["app"]
