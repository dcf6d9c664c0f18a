"""`backchannel status RUN` and `backchannel export RUN`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from backchannel.cli._common import (
    describe_counts,
    err,
    friendly_errors,
    out,
    print_errors,
    print_skipped,
)
from backchannel.errors import RunDirectoryError

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables


@friendly_errors
def status_command(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    errors_in_full: Annotated[
        bool,
        typer.Option(
            "--errors",
            help="The whole stored traceback of one conversation per distinct error.",
        ),
    ] = False,
) -> None:
    """Conversations, calls, tokens, cache hits, retries and failures of a stored run."""
    from backchannel.store import (
        STATUS_TABLES,
        RunStore,
        describe_quality,
        incomplete_summary,
        unusable_message,
    )

    store = RunStore(run, readonly=True, reads=STATUS_TABLES)
    try:
        manifest, counts, usage = store.manifest(), store.counts(), store.usage()
        errors, quality, state = store.errors(), store.answer_quality(), store.run_state()
        replicas, shared = store.replica_calls(), store.shared_calls()
        tracebacks = [(cid, store.error_of(cid)) for _, _, cid in errors] if errors_in_full else []
    finally:
        store.close()
    from backchannel.backends import model_caveat

    caveat = model_caveat(usage.by_model)
    if caveat is not None:
        out.print(f"[yellow]note:[/] {caveat}", markup=True)
    out.print(f"run {manifest.get('run_id')} ({manifest.get('paradigm')}) in {run}")
    out.print(f"conversations: {describe_counts(counts)}; events: {counts['events']}")
    out.print(describe_quality(quality))
    unusable = unusable_message(quality)
    if unusable:
        err.print(f"[yellow]warning:[/] {unusable}", soft_wrap=True)
    partial = incomplete_summary(state)
    if partial:
        err.print(f"[yellow]note:[/] {partial}", soft_wrap=True)
    print_skipped(manifest.get("skipped_items") or [])
    _print_stopping(manifest.get("stopping"))
    if errors:
        err.print("errors of unfinished conversations (rerun the same command to retry them):")
        print_errors(errors, None if errors_in_full else run)
    for conversation_id, text in tracebacks:
        out.print(f"conversation {conversation_id}:", markup=False, highlight=False)
        out.print(text or "(no error stored)", markup=False, highlight=False, soft_wrap=True)
    if errors_in_full and not errors:
        err.print("no unfinished conversation has an error stored")
    total = usage.total()
    out.print(
        f"calls {total.calls}  prompt tokens {total.prompt_tokens}  completion tokens "
        f"{total.completion_tokens}  cache hits {total.cache_hits}  retries {total.retries}  "
        f"re-asks {total.reasks}  failures {total.failures}  parse failures {total.parse_failures}"
        + (f"  reasoning tokens {total.reasoning_tokens}" if total.reasoning_tokens else "")
        + (f"  truncated in reasoning {total.truncated}" if total.truncated else "")
        + (f"  cost ${total.cost:.4f}" if total.cost else "")
    )
    for model, u in sorted(usage.by_model.items()):
        out.print(f"  {model}: {u.calls} calls, {u.prompt_tokens + u.completion_tokens} tokens")
    if shared:
        out.print(
            f"calls shared by paired arms: {shared} answered by another conversation's call "
            "(made once)"
        )
    per_replica, moved = replica_calls(replicas)
    if per_replica:
        out.print(
            f"replicas: calls of stored conversations ({moved} conversation(s) moved to "
            "another replica after a failure)"
        )
        for url, calls in sorted(per_replica.items()):
            out.print(f"  {url}: {calls} calls", soft_wrap=True, highlight=False)
    from backchannel.backends import cache_totals
    from backchannel.store import CACHE_NAME

    try:
        cached = cache_totals(run / CACHE_NAME)
    except RunDirectoryError as error:
        err.print(f"[yellow]note:[/] {error}")
        cached = None
    if cached is not None:
        answers, prompt, completion = cached
        out.print(
            f"response cache: {answers} answers ({prompt} prompt, {completion} completion tokens), "
            "including calls of conversations not yet stored"
        )


def _print_stopping(record: Any) -> None:
    """A run under `--until`: its rule, every look and why it stopped (or that it goes on)."""
    if not isinstance(record, dict):
        return
    from backchannel.orchestration import describe_looks, stop_reason

    looks = record.get("looks") or []
    out.print(
        f"stopping: --until {record.get('until')!r}, batches of {record.get('batch')} replicates "
        f"(first {record.get('first')}), ceiling {record.get('ceiling')} replicates",
        markup=False,
    )
    for line in describe_looks(looks):
        out.print(f"  {line}", markup=False, soft_wrap=True)
    if looks:
        out.print(f"  {stop_reason(looks[-1], str(record.get('until')))}", markup=False)
    else:
        out.print("  no look yet: the first batch has not finished", markup=False)


def replica_calls(stored: Iterable[str | None]) -> tuple[dict[str, int], int]:
    """Calls per replica summed over conversations (their `meta.replica_calls` as JSON), and
    how many conversations used more than one."""
    totals: dict[str, int] = {}
    moved = 0
    for text in stored:
        calls = json.loads(text) if text else None
        if not calls:
            continue
        moved += len(calls) > 1
        for url, count in calls.items():
            totals[url] = totals.get(url, 0) + int(count)
    return totals, moved


def _paradigm_tables(manifest: dict[str, Any]) -> Callable[[RunTables], dict[str, pd.DataFrame]]:
    """How to build the paradigm's own tables of a batch; none (said on stderr) when its
    paradigm is not installed."""
    from backchannel.errors import ConfigError

    if not manifest.get("paradigm"):
        return lambda _: {}
    from backchannel.paradigms import get_paradigm

    try:
        paradigm = get_paradigm(str(manifest["paradigm"]))
    except ConfigError as error:
        err.print(f"only the common tables are written: {error}", markup=False)
        return lambda _: {}
    return paradigm.tables


@friendly_errors
def export_command(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Directory for the tables.")],
    fmt: Annotated[
        Literal["parquet", "csv", "inspect", "hf"],
        typer.Option(
            "--format",
            help="parquet or csv (tidy tables); inspect (Inspect .eval logs) or hf (a Hugging "
            "Face dataset), see docs/data-schema.md.",
        ),
    ] = "parquet",
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="inspect and hf: replace an earlier export of that format in -o."
        ),
    ] = False,
) -> None:
    """Write the tidy tables (events, labels, conversations, manifest, and the paradigm's own
    tables, such as a citation graph) of a run, or the run as Inspect logs or a Hugging Face
    dataset."""
    if fmt == "inspect" or fmt == "hf":
        from backchannel.cli._interop import export_interop

        export_interop(run, output, fmt, force=force)
        return
    from backchannel.store import EXPORT_BATCH, RunStore, export_batches, incomplete_summary

    store = RunStore(run, readonly=True)
    try:
        manifest = {**store.manifest(), "run_state": store.run_state()}
        written = export_batches(
            store.batches(EXPORT_BATCH), output, fmt, _paradigm_tables(manifest)
        )
    finally:
        store.close()
    for path in written:
        out.print(str(path), soft_wrap=True, markup=False, highlight=False)
    partial = incomplete_summary(manifest.get("run_state"))
    if partial:
        err.print(f"[yellow]note:[/] {partial} (manifest.json: run_state)")
