"""The execute stage under `run --until`: the design's replicates run in batches, balanced over
cells and items, with a look at the headline contrasts after each batch, until the target holds
or the design's ceiling is reached. Every look, and why the run stopped, is in the manifest
(`stopping`); a resumed run continues the same batches and looks."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.backends import LLMClient, Usage
from backchannel.errors import ConfigError, RunDirectoryError
from backchannel.orchestration._clients import max_active_conversations
from backchannel.orchestration._execute import (
    ProgressCallback,
    RunOutcome,
    Watcher,
    execute,
    plan_client,
    run_plan,
)
from backchannel.orchestration._plan import Plan
from backchannel.orchestration._stopping import (
    Look,
    Reading,
    Target,
    batch_ends,
    decide,
    default_batch,
    parse_target,
)

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.experiment import LoadedExperiment
    from backchannel.paradigms import AnalysisOptions, Paradigm
    from backchannel.planning import Contrast, ContrastReading
    from backchannel.store import RunStore

ContrastReader = Callable[["RunTables"], Mapping[str, Reading]]
"""Reads the named headline contrasts of the stored conversations."""

LookCallback = Callable[[Mapping[str, Any]], None]
"""Called with each look's manifest record as it is written."""

MANIFEST_KEY = "stopping"


@dataclass(frozen=True)
class Stopping:
    """How a run stops: the target, the replicates per batch (the first batch may be larger)
    and the design's ceiling (its largest replicate count)."""

    target: Target
    batch: int
    first: int
    ceiling: int

    @property
    def ends(self) -> list[int]:
        return batch_ends(self.ceiling, self.batch, self.first)

    def as_dict(self) -> dict[str, Any]:
        return {
            "until": str(self.target),
            "batch": self.batch,
            "first": self.first,
            "ceiling": self.ceiling,
        }


def stopping_for(
    the_plan: Plan, target: Target, batch: int | None = None, first: int | None = None
) -> Stopping:
    """The stopping rule of this plan: batches of `batch` replicates (default a tenth of the
    ceiling), the first of `first` (default `batch`)."""
    if not the_plan.specs:
        raise ConfigError("--until: the design has no conversations to run")
    ceiling = max(spec.replicate for spec in the_plan.specs) + 1
    size = batch if batch is not None else default_batch(ceiling)
    return Stopping(target, size, first if first is not None else size, ceiling)


def stopping_record(store: RunStore) -> dict[str, Any] | None:
    """The stopping record of a stored run (None for a run without `--until`)."""
    value = store.manifest().get(MANIFEST_KEY)
    return value if isinstance(value, dict) else None


def check_resume(store: RunStore, directory: Path, stopping: Stopping) -> None:
    """Refuse to resume under another rule, or a run stored without one: the looks would not
    be the same sequence."""
    stored = stopping_record(store)
    if stored is None:
        if store.finished_ids() or any(store.counts()[k] for k in ("incomplete", "failed")):
            raise RunDirectoryError(
                f"{directory} holds a run started without --until; resume it without --until, "
                "or pass a new -o directory"
            )
        return
    rule = {k: stored.get(k) for k in stopping.as_dict()}
    if rule != stopping.as_dict():
        raise RunDirectoryError(
            f"{directory} stops on {stored.get('until')!r} in batches of {stored.get('batch')} "
            f"(first {stored.get('first')}, ceiling {stored.get('ceiling')}); resume it with the "
            "same --until and stopping settings, or pass a new -o directory"
        )


def _write(store: RunStore, stopping: Stopping, looks: list[dict[str, Any]]) -> dict[str, Any]:
    last = looks[-1] if looks else None
    record = {
        **stopping.as_dict(),
        "looks": looks,
        "stopped": None if last is None or last["stop"] is None else last["stop"],
    }
    store.write_manifest({MANIFEST_KEY: record})
    return record


def _batch_plan(the_plan: Plan, end: int, done: set[str]) -> Plan:
    """The conversations of every batch up to replicate `end` (balanced: each cell and item up
    to the same replicate), the stored ones marked done."""
    specs = [s for s in the_plan.specs if s.replicate < end]
    return replace(the_plan, specs=specs, done={s.conversation_id for s in specs} & done)


async def run_until(
    the_plan: Plan,
    store: RunStore,
    directory: Path,
    stopping: Stopping,
    read: ContrastReader,
    *,
    concurrency: int | None = None,
    on_progress: ProgressCallback | None = None,
    on_look: LookCallback | None = None,
    watch: Watcher | None = None,
    executor: str = "asyncio",
) -> RunOutcome:
    """Run batch after batch, looking after each, until the rule stops the run; a run with
    unfinished conversations stops without a look (running again retries them and looks)."""
    check_resume(store, directory, stopping)
    stored = stopping_record(store)
    looks: list[dict[str, Any]] = list(stored["looks"]) if stored else []
    _write(store, stopping, looks)
    counts = {"done": 0, "incomplete": 0, "failed": 0}
    usage = Usage()
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        client: LLMClient | None = None
        for index, end in enumerate(stopping.ends):
            if index < len(looks):
                if looks[index]["stop"] is not None:  # stopped before: the run is complete
                    store.record_plan(int(looks[index]["conversations"]))
                    break
                continue
            batch = _batch_plan(the_plan, end, store.finished_ids())
            store.record_plan(len(batch.specs))
            if executor != "asyncio":
                outcome = await run_plan(
                    batch,
                    store,
                    directory,
                    concurrency=concurrency,
                    on_progress=on_progress,
                    executor=executor,
                )
                usage.add(outcome.usage)
                batch_counts = outcome.counts
            else:
                if client is None:  # one client (and embedded server) for every batch
                    client = await stack.enter_async_context(
                        plan_client(the_plan, directory, concurrency=concurrency, watch=watch)
                    )
                batch_counts = await execute(
                    batch,
                    store,
                    client=client,
                    max_active=max_active_conversations(batch, concurrency),
                    on_progress=on_progress,
                )
            for key, value in batch_counts.items():
                counts[key] += value
            if batch_counts["incomplete"] or batch_counts["failed"]:
                break
            readings = read(store.tables())
            look = Look(
                index=index,
                replicates=end,
                conversations=len(batch.specs),
                calls=store.usage().total().calls,
                readings={
                    name: readings.get(name, Reading(None, None, 0, "not computed by the paradigm"))
                    for name in stopping.target.contrasts
                },
                stop=decide(stopping.target, readings, end, stopping.ceiling),
            )
            looks.append(look.as_dict())
            record = _write(store, stopping, looks)
            if on_look is not None:
                on_look(record)
            if look.stop is not None:
                break
        if client is not None:
            usage.add(client.usage.total())
    return RunOutcome(counts, usage, time.perf_counter() - started)


def requested_target(
    loaded: LoadedExperiment, until: str | None, limit: int | None
) -> Target | None:
    """The target of `--until` (else the file's `stopping.until`), parsed and checked against
    the paradigm's headline contrasts before anything runs or is written."""
    text = until if until is not None else loaded.experiment.stopping.until
    if text is None:
        return None
    target = parse_target(text)
    if limit is not None:
        raise ConfigError(
            "--until and --limit both choose how many conversations run; pass one of them"
        )
    names = [c.name for c in declared_contrasts(loaded.paradigm, loaded.experiment.factors)]
    target.check(names, loaded.experiment.paradigm)
    return target


def declared_contrasts(
    paradigm: Paradigm[Any], levels: Mapping[str, Sequence[Any]]
) -> tuple[Contrast, ...]:
    """The headline contrasts the paradigm declares for a design of these factor levels."""
    return paradigm.contrasts(levels)


def contrast_reader(
    paradigm: Paradigm[Any],
    levels: Mapping[str, Sequence[Any]],
    options: AnalysisOptions | None = None,
) -> ContrastReader:
    """Reads every declared contrast of the stored conversations (the paradigm's own estimate,
    interval and half-width, `planning.read_contrast`), under the metrics' default judge
    unless `options` names one."""
    from backchannel.paradigms import AnalysisOptions
    from backchannel.planning import read_contrast

    contrasts = declared_contrasts(paradigm, levels)
    chosen = options if options is not None else AnalysisOptions()

    def read(tables: RunTables) -> dict[str, Reading]:
        return {c.name: reading_of(read_contrast(c, tables, chosen)) for c in contrasts}

    return read


def reading_of(reading: ContrastReading) -> Reading:
    """The look's record of one contrast read from a run."""
    rows = reading.rows
    skipped = next((row.skipped for row in rows if row.skipped), None)
    if not rows:
        skipped = "no stratum has conversations in both arms yet"
    elif reading.halfwidth is None and skipped is None:
        skipped = "no interval yet"
    return Reading(
        estimate=reading.value("estimate"),
        halfwidth=reading.halfwidth,
        n=reading.n,
        skipped=skipped,
        strata=tuple(
            {
                "stratum": dict(row.stratum),
                "estimate": row.estimate,
                "halfwidth": row.halfwidth,
                "n": row.n,
                "skipped": row.skipped,
            }
            for row in rows
        ),
    )


def resolve_stopping(the_plan: Plan, target: Target | None, store: RunStore) -> Stopping | None:
    """This invocation's rule: the requested target with the file's batches, or, with none
    requested, the rule a stored run was started with (so a plain resume continues it)."""
    settings = the_plan.loaded.experiment.stopping
    if target is not None:
        return stopping_for(the_plan, target, settings.batch, settings.first)
    stored = stopping_record(store)
    if stored is None:
        return None
    rule = parse_target(str(stored["until"]))
    return Stopping(rule, int(stored["batch"]), int(stored["first"]), int(stored["ceiling"]))
