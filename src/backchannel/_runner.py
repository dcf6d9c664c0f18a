"""`backchannel run`: expand the design, resume what is stored, run the rest, commit each
conversation as it finishes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel._plan import Plan
from backchannel.backends import (
    SMALL_MODEL_WARNING,
    LLMClient,
    PopulationBook,
    ResponseCache,
    Usage,
    UsageMeter,
    build_client,
    in_flight_bound,
    resolve_routes,
)
from backchannel.engine import (
    ConversationOutcome,
    ConversationSpec,
    active_conversations,
    run_conversation,
    schedule,
)
from backchannel.errors import ConfigError, RunDirectoryError
from backchannel.experiment import (
    Experiment,
    LoadedExperiment,
    cell_settings,
    expand_design,
    redact,
)
from backchannel.store import CACHE_NAME, DATABASE_NAME, RunStore, lock_held

# Fields that change no model output: a resumed run may change them (a new base_url after the
# server moved, a lower max_in_flight after rate limits) without becoming another experiment.
_TRANSPORT_FIELDS = (
    "base_url",
    "base_urls",
    "api_key_env",
    "max_in_flight",
    "adaptive_in_flight",
    "min_in_flight",
    "timeout_s",
    "price",
)


def fingerprint(loaded: LoadedExperiment) -> str:
    """A hash of everything that changes what the run asks and stores (not how it connects)."""
    resolved = loaded.as_run()
    resolved.pop("name", None)
    resolved.pop("retry", None)
    resolved.pop("local", None)
    resolved.pop("max_conversations", None)  # a ceiling on the design, not part of it
    for endpoint in resolved.get("endpoints", []):
        for name in _TRANSPORT_FIELDS:
            endpoint.pop(name, None)
        if not endpoint.get("extra_body"):
            endpoint.pop("extra_body", None)
    # Left out when unused, so runs started before these settings existed still resume.
    if not resolved.get("generation"):
        resolved.pop("generation", None)
    if resolved.get("population") is None:
        resolved.pop("population", None)
    payload = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def spread(specs: list[ConversationSpec], limit: int) -> list[ConversationSpec]:
    """The first `limit` conversations taken round robin over cells (each cell's first
    conversation, then each cell's second, ...), so a quick look covers every condition; the
    chosen ones keep the design's order."""
    by_cell: dict[str, list[int]] = {}
    for index, spec in enumerate(specs):
        by_cell.setdefault(spec.cell_key, []).append(index)
    queues = list(by_cell.values())
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)][: limit - len(chosen)]
        depth += 1
    return [specs[i] for i in sorted(chosen)]


def plan(loaded: LoadedExperiment, limit: int | None = None) -> Plan:
    resolved = cell_settings(loaded)
    design = expand_design(loaded, resolved)
    specs = design.specs
    if limit is not None:
        specs = spread(specs, limit)
    models: set[str] = set()
    for key in {s.cell_key for s in specs}:
        models |= loaded.paradigm.models(resolved[key])
    return Plan(loaded, specs, models=models, settings_by_cell=resolved, skipped=design.skipped)


def record_plan(store: RunStore, the_plan: Plan) -> None:
    """Note in the manifest how many conversations this invocation means to store, and the
    rows of the data that became none (`skipped_items`, each with its reason)."""
    store.record_plan(len(the_plan.specs))
    store.write_manifest({"skipped_items": [s.as_dict() for s in the_plan.skipped]})


def _different_experiment(directory: Path, manifest: dict[str, Any]) -> RunDirectoryError:
    return RunDirectoryError(
        f"{directory} holds a run of a different experiment "
        f"({manifest.get('experiment_path')}, {manifest.get('name')!r}); "
        "resume it with the same file and --model, or pass a new -o directory"
    )


def _busy(directory: Path) -> RunDirectoryError:
    return RunDirectoryError(
        f"another backchannel process is running in {directory}; wait for it to finish (or stop "
        "it) before running or resuming here"
    )


def check_cache(path: Path) -> None:
    """Refuse a damaged response cache before the run directory is touched."""
    from backchannel._sqlite import damage
    from backchannel.backends import damaged_cache_message

    if path.exists():
        problem = damage(path)
        if problem is not None:
            raise RunDirectoryError(damaged_cache_message(path, problem))


def open_run_directory(directory: Path, loaded: LoadedExperiment) -> RunStore:
    """Create the run directory, or reopen it to resume; refuse a different experiment."""
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory with -o")
    check_cache(directory / CACHE_NAME)
    exists = (directory / DATABASE_NAME).exists()
    if not exists and directory.exists() and any(directory.iterdir()):
        raise RunDirectoryError(
            f"{directory} exists and is not a run directory; choose an empty or new directory"
        )
    print_ = fingerprint(loaded)
    if exists:
        # Checked before the store is opened at all: a directory another process runs in is
        # not touched (not its database, its log or the log's index).
        if lock_held(directory):
            raise _busy(directory)
        # Checked read-only: a run directory of another experiment is not written.
        reader = RunStore(directory, readonly=True)
        try:
            stored = reader.manifest()
        finally:
            reader.close()
        if stored and stored.get("fingerprint") != print_:
            raise _different_experiment(directory, stored)
    store = RunStore(directory, create=True)
    try:
        store.lock()
    except RunDirectoryError:
        store.close()
        raise
    manifest = store.manifest()
    if manifest:
        if manifest.get("fingerprint") != print_:
            store.close()
            raise _different_experiment(directory, manifest)
        return store
    from backchannel._provenance import provenance

    store.write_manifest(
        {
            "manifest_version": 1,
            "run_id": f"{loaded.experiment.name}-{print_[:12]}",
            "name": loaded.experiment.name,
            "paradigm": loaded.experiment.paradigm,
            "experiment_path": str(loaded.path),
            "config_as_passed": redact(loaded.text),
            "config_resolved": loaded.resolved(),
            "fingerprint": print_,
            "seed": loaded.experiment.seed,
            "factors": list(loaded.experiment.factors),
            "prompt_templates": loaded.paradigm.templates(),
            "created_at": time.time(),
            **provenance(),
        }
    )
    return store


ProgressCallback = Callable[[int, int, Usage], None]
"""Called after each stored conversation with (finished, total, usage so far)."""
Watcher = Callable[[LLMClient], Coroutine[Any, Any, None]]
"""Runs beside a run (e.g. refreshing a progress display from the client's usage); cancelled at
its end."""


def max_active_conversations(run_plan: Plan, concurrency: int | None) -> int:
    """How many conversations run at once: a few per call the run's endpoints can have in
    flight (their `max_in_flight`, each replica's, the local slots; `--concurrency` for each),
    so servers stay busy and conversations still finish steadily on a small one."""
    experiment = run_plan.loaded.experiment
    specs = resolve_routes(
        run_plan.models,
        endpoints=experiment.endpoints,
        local=experiment.local,
        max_in_flight=concurrency,
        model_settings=experiment.model_settings(),
        population=experiment.population,
        population_rules=run_plan.loaded.paradigm.population_book(),
    )
    return active_conversations(in_flight_bound(specs))


@dataclass(frozen=True)
class RunOutcome:
    """What one invocation of a run did: conversations by status, usage and time."""

    counts: dict[str, int]
    usage: Usage
    elapsed_s: float


async def run_plan(
    the_plan: Plan,
    store: RunStore,
    directory: Path,
    *,
    concurrency: int | None = None,
    on_progress: ProgressCallback | None = None,
    watch: Watcher | None = None,
    executor: str = "asyncio",
) -> RunOutcome:
    """Build the clients, run the plan's remaining conversations into `store`, close the clients.

    `executor` `ray` or `ray://ADDRESS` runs the conversations on a Ray cluster's workers
    (each builds its own clients); this process still writes the store and the cache.
    """
    if executor != "asyncio":
        return await _run_on_ray(
            the_plan, store, directory, executor, concurrency=concurrency, on_progress=on_progress
        )
    client, cache = make_client(the_plan, directory, concurrency=concurrency)
    started = time.perf_counter()
    watcher = asyncio.create_task(watch(client)) if watch is not None else None
    try:
        counts = await execute(
            the_plan,
            store,
            client=client,
            max_active=max_active_conversations(the_plan, concurrency),
            on_progress=on_progress,
        )
    finally:
        if watcher is not None:
            watcher.cancel()
        await client.aclose()
        cache.close()
    return RunOutcome(counts, client.usage.total(), time.perf_counter() - started)


async def _run_on_ray(
    the_plan: Plan,
    store: RunStore,
    directory: Path,
    executor: str,
    *,
    concurrency: int | None,
    on_progress: ProgressCallback | None,
) -> RunOutcome:
    from backchannel._ray import execute_on_ray

    usage = UsageMeter()
    cache = ResponseCache(directory / CACHE_NAME)
    started = time.perf_counter()

    def progress(finished: int, total: int) -> None:
        if on_progress is not None:
            on_progress(finished, total, usage.total())

    try:
        counts = await execute_on_ray(
            the_plan,
            store,
            cache,
            executor=executor,
            concurrency=concurrency,
            usage=usage,
            on_progress=progress,
        )
    finally:
        cache.close()
    return RunOutcome(counts, usage.total(), time.perf_counter() - started)


async def execute(
    run_plan: Plan,
    store: RunStore,
    *,
    client: LLMClient,
    max_active: int,
    on_progress: ProgressCallback | None = None,
) -> dict[str, int]:
    """Run the plan's remaining conversations; returns counts of done, incomplete and failed."""
    loaded = run_plan.loaded
    todo = run_plan.todo
    counts = {"done": 0, "incomplete": 0, "failed": 0}
    total = len(todo)

    def on_done(outcome: ConversationOutcome) -> None:
        context = outcome.context
        kept = outcome.status != "failed"
        store.commit_conversation(
            outcome.spec,
            outcome.position,
            context.log.events if kept else [],
            context.usage,
            context.meta,
            labels=context.labels if kept else (),
            status=outcome.status,
            error=outcome.error,
        )
        counts[outcome.status] += 1
        if on_progress is not None:
            on_progress(sum(counts.values()), total, client.usage.total())

    async def start(position: int, spec: ConversationSpec) -> ConversationOutcome:
        settings = run_plan.settings_by_cell[spec.cell_key]
        return await run_conversation(
            spec, position, loaded.paradigm.run, settings, client, loaded.experiment.seed
        )

    await schedule(todo, start, on_done, max_active=max_active)
    return counts


def check_models(run_plan: Plan, *, concurrency: int | None = None) -> None:
    """Raise ConfigError for a model that cannot be served (unknown sim, missing model file,
    missing key), before anything is written."""
    experiment = run_plan.loaded.experiment
    try:
        resolve_routes(
            run_plan.models,
            endpoints=experiment.endpoints,
            local=experiment.local,
            max_in_flight=concurrency,
            model_settings=experiment.model_settings(),
            population=experiment.population,
            population_rules=run_plan.loaded.paradigm.population_book(),
        )
    except ConfigError as error:
        raise ConfigError(f"{run_plan.loaded.path}: {error}") from None


def check_reachable(run_plan: Plan) -> None:
    """One cheap request per model server before the run directory is written."""
    asyncio.run(acheck_reachable(run_plan))


async def acheck_reachable(run_plan: Plan) -> None:
    """`check_reachable` for callers inside an event loop."""
    from backchannel.backends import check_reachable as check

    experiment = run_plan.loaded.experiment
    await check(
        run_plan.models,
        endpoints=experiment.endpoints,
        local=experiment.local,
        model_settings=experiment.model_settings(),
    )


def make_client(
    run_plan: Plan, directory: Path, *, concurrency: int | None, cache_path: Path | None = None
) -> tuple[LLMClient, ResponseCache]:
    """The run's client, on the response cache of its directory."""
    return experiment_client(
        run_plan.loaded.experiment,
        run_plan.models,
        cache_path or directory / CACHE_NAME,
        concurrency=concurrency,
        population_rules=run_plan.loaded.paradigm.population_book(),
    )


def experiment_client(
    experiment: Experiment,
    models: Iterable[str],
    cache_path: Path,
    *,
    concurrency: int | None,
    population_rules: PopulationBook | None = None,
) -> tuple[LLMClient, ResponseCache]:
    """The one place a client is built from an experiment's endpoints, local server, retry
    policy, re-asks and generation rules (used by `run` and by `judge`); `sim/population`
    answers with `population_rules` (the paradigm's)."""
    cache = ResponseCache(cache_path)
    client = build_client(
        models,
        endpoints=experiment.endpoints,
        local=experiment.local,
        cache=cache,
        retry=experiment.retry,
        max_in_flight=concurrency,
        max_reasks=experiment.max_reasks,
        model_settings=experiment.model_settings(),
        population=experiment.population,
        population_rules=population_rules,
    )
    return client, cache


def small_model_warning(models: set[str]) -> str | None:
    return SMALL_MODEL_WARNING if "local/smollm2" in models else None
