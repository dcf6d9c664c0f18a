"""`backchannel run EXPERIMENT.yaml -o RUN`: run (or resume) an experiment."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from backchannel import _signals
from backchannel.cli._common import (
    describe_counts,
    err,
    friendly_errors,
    out,
    print_errors,
    print_skipped,
)

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Mapping

    from backchannel.backends import LLMClient, Usage
    from backchannel.orchestration import Stopping


def _usage_line(usage: Usage) -> str:
    return (
        f"calls {usage.calls}  tokens {usage.prompt_tokens + usage.completion_tokens}  "
        f"cache hits {usage.cache_hits}  retries {usage.retries}  "
        f"failures {usage.failures + usage.parse_failures + usage.truncated}"
    )


_stopping: list[bool] = []


def _stop(task: asyncio.Task[dict[str, int]]) -> None:
    _stopping.append(True)
    task.cancel()


def _replica_line(client: LLMClient) -> str:
    """Calls per replica, a drained one marked: `replicas 120 118 0(drained) 119`."""
    stats = client.replica_stats()
    if not stats:
        return ""
    parts = [f"{s.calls}" + ("" if s.healthy else "(drained)") for s in stats]
    return "  replicas " + " ".join(parts)


def _print_batches(stopping: Stopping) -> None:
    """The dry run of `--until`: the batches and the ceiling the estimate above is for."""
    out.print(
        f"stopping when {stopping.target} holds: batches end at replicates "
        f"{', '.join(map(str, stopping.ends))} per cell and item; the estimate above is the "
        f"ceiling ({stopping.ceiling} replicates)"
    )


@friendly_errors
@_signals.terminable
def run_command(
    experiment: Annotated[Path, typer.Argument(help="The experiment file (YAML).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The run directory.")],
    model: Annotated[
        str | None, typer.Option("--model", help="Use this PROVIDER/MODEL for every model.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Run only the first N conversations.")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, help="In-flight calls per endpoint (overrides the file)."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print conversations, calls and tokens; call nothing.")
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="asyncio (this process), ray (a local Ray, or the RAY_ADDRESS cluster) or "
            "ray://HOST:PORT (an existing Ray cluster).",
        ),
    ] = "asyncio",
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help='Add replicates in batches until a target holds, e.g. "fpi_gap.halfwidth<=0.05" '
            "(at most the design's replicates; replaces the file's stopping.until).",
        ),
    ] = None,
) -> None:
    """Run an experiment; running it again on the same directory resumes it."""
    import asyncio

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from backchannel import orchestration
    from backchannel.experiment import load_experiment
    from backchannel.store import describe_quality, unusable_message

    _stopping.clear()
    loaded = load_experiment(experiment, model_override=model)
    run_plan = orchestration.plan(loaded, limit)
    target = orchestration.requested_target(loaded, until, limit)
    print_skipped([s.as_dict() for s in run_plan.skipped])
    if dry_run:
        rule = loaded.experiment.stopping
        estimate = run_plan.estimate(only_todo=False)
        out.print(f"experiment {loaded.experiment.name!r} ({loaded.experiment.paradigm})")
        out.print(f"conversations: {estimate['conversations']}")
        out.print(f"estimated calls: {estimate['calls']}")
        for name, calls in sorted(estimate["calls_by_model"].items()):
            out.print(f"  {name}: {calls}")
        out.print(
            f"estimated tokens: {estimate['prompt_tokens']} prompt, "
            f"{estimate['completion_tokens']} completion"
        )
        shared = estimate["shared_calls"]
        if shared is None:
            out.print("calls shared by paired arms: not predicted here")
        elif shared:
            out.print(
                f"calls shared by paired arms: {shared} (made once; calls to the models: "
                f"{estimate['calls'] - shared})"
            )
        if target is not None:
            _print_batches(orchestration.stopping_for(run_plan, target, rule.batch, rule.first))
        return
    warning = orchestration.small_model_warning(run_plan.models)
    if warning:
        err.print(f"[yellow]note:[/] {warning}")
    orchestration.check_models(run_plan, concurrency=concurrency)
    orchestration.check_executor(executor)
    orchestration.check_reachable(run_plan)
    store = orchestration.open_run_directory(output, loaded)
    try:
        run_plan.done = store.finished_ids()
        stopping = orchestration.resolve_stopping(run_plan, target, store)
        if stopping is not None:
            orchestration.check_resume(store, output, stopping)
            if target is None:
                err.print(f"resuming the run's stopping rule: --until {str(stopping.target)!r}")
        orchestration.record_plan(store, run_plan)
        todo = len(run_plan.todo)
        stopped = orchestration.stopping_record(store) if stopping is not None else None
        if stopped is not None and stopped["stopped"] is not None:
            reason = orchestration.stop_reason(stopped["looks"][-1], stopped["until"])
            err.print(f"this run is complete: {reason}; nothing to run")
            todo = 0
        elif run_plan.done and stopping is not None:
            err.print(
                f"resuming: {len(run_plan.done)} conversations already stored, up to {todo} to "
                "run (the stopping rule decides how many)"
            )
        elif run_plan.done:
            err.print(f"resuming: {len(run_plan.done)} conversations already stored, {todo} to run")
        if stopping is not None and todo:
            err.print(
                f"stopping when {stopping.target} holds, or at {stopping.ceiling} replicates: "
                f"batches end at replicates {', '.join(map(str, stopping.ends))}"
            )
        offset = [0, 0]  # conversations of earlier batches, of the current one
        with Progress(
            TextColumn("conversations"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[usage]}"),
            TimeRemainingColumn(),
            console=err,
            transient=False,
        ) as progress:
            task = progress.add_task("run", total=todo, usage="")

            def on_progress(finished: int, total: int, usage: Usage) -> None:
                offset[1] = finished
                progress.update(task, completed=offset[0] + finished, usage=_usage_line(usage))

            def on_look(record: Mapping[str, Any]) -> None:
                offset[0], offset[1] = offset[0] + offset[1], 0
                look = record["looks"][-1]
                progress.console.print(orchestration.describe_looks([look])[0], soft_wrap=True)

            async def refresh(client: LLMClient) -> None:
                # Calls, tokens and retries move between conversation ends too.
                while True:
                    await asyncio.sleep(0.5)
                    line = _usage_line(client.usage.total()) + _replica_line(client)
                    progress.update(task, usage=line)

            async def main() -> orchestration.RunOutcome:
                # SIGTERM stops the run the way Ctrl-C does: cancel, keep what is committed.
                loop, task = asyncio.get_running_loop(), asyncio.current_task()
                assert task is not None
                terminable = _signals.in_main_thread()
                if terminable:
                    loop.add_signal_handler(signal.SIGTERM, _stop, task)
                try:
                    if stopping is not None:
                        return await orchestration.run_until(
                            run_plan,
                            store,
                            output,
                            stopping,
                            orchestration.contrast_reader(
                                loaded.paradigm, loaded.experiment.factors
                            ),
                            concurrency=concurrency,
                            on_progress=on_progress,
                            on_look=on_look,
                            watch=refresh,
                            executor=executor,
                        )
                    return await orchestration.run_plan(
                        run_plan,
                        store,
                        output,
                        concurrency=concurrency,
                        on_progress=on_progress,
                        watch=refresh,
                        executor=executor,
                    )
                finally:
                    if terminable:
                        loop.remove_signal_handler(signal.SIGTERM)
                        _signals.install()

            try:
                outcome = asyncio.run(main())
            except asyncio.CancelledError:
                if _stopping:
                    raise _signals.Terminated() from None
                raise
        counts, usage, elapsed = outcome.counts, outcome.usage, outcome.elapsed_s
        stored = store.counts()
        errors = store.errors()
        quality = store.answer_quality()
        stopped = orchestration.stopping_record(store)
    finally:
        store.close()
    err.print(
        f"finished {counts['done']} conversations ({counts['incomplete']} incomplete, "
        f"{counts['failed']} failed) in {elapsed:.1f} s; " + _usage_line(usage)
    )
    out.print(f"results: {output.resolve()}")
    out.print(f"  stored conversations: {describe_counts(stored)}")
    out.print(f"  {describe_quality(quality)}")
    if stopped is not None and stopped["looks"]:
        out.print(f"  {orchestration.stop_reason(stopped['looks'][-1], stopped['until'])}")
    if run_plan.skipped:
        out.print(
            f"  rows of the data that became no conversation: {len(run_plan.skipped)} "
            "(see the note above, `status` and the manifest's skipped_items)"
        )
    out.print(f"  next: backchannel report {output}  |  backchannel export {output} -o DIR")
    unusable = unusable_message(quality)
    if unusable:
        err.print(f"[bold red]error:[/] {unusable}", soft_wrap=True)
    if counts["incomplete"] or counts["failed"]:
        print_errors(errors, output)
        err.print(
            "incomplete conversations keep their events; failed ones keep only the error. "
            "Run the same command again to retry both (answers already received come from the "
            "cache)."
        )
        raise typer.Exit(1)
    if unusable:
        raise typer.Exit(1)
