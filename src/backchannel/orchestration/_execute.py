"""The run's execute stage: the plan's remaining conversations run at once on asyncio (or on a
Ray cluster, `_ray`), and each is committed to the run store as it finishes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.backends import LLMClient, ResponseCache, Usage, UsageMeter
from backchannel.engine import ConversationOutcome, ConversationSpec, run_conversation, schedule
from backchannel.orchestration._clients import make_client, max_active_conversations
from backchannel.orchestration._plan import Plan
from backchannel.store import CACHE_NAME, RunStore

ProgressCallback = Callable[[int, int, Usage], None]
"""Called after each stored conversation with (finished, total, usage so far)."""


Watcher = Callable[[LLMClient], Coroutine[Any, Any, None]]
"""Runs beside a run (e.g. refreshing a progress display from the client's usage); cancelled at
its end."""


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
    started = time.perf_counter()
    async with plan_client(the_plan, directory, concurrency=concurrency, watch=watch) as client:
        counts = await execute(
            the_plan,
            store,
            client=client,
            max_active=max_active_conversations(the_plan, concurrency),
            on_progress=on_progress,
        )
    return RunOutcome(counts, client.usage.total(), time.perf_counter() - started)


@asynccontextmanager
async def plan_client(
    the_plan: Plan, directory: Path, *, concurrency: int | None, watch: Watcher | None = None
) -> AsyncIterator[LLMClient]:
    """The plan's client (and `watch` beside it) for as long as the block runs, so several
    batches share one client (and one embedded server); closed with its cache at the end."""
    client, cache = make_client(the_plan, directory, concurrency=concurrency)
    watcher = asyncio.create_task(watch(client)) if watch is not None else None
    try:
        yield client
    finally:
        if watcher is not None:
            watcher.cancel()
        await client.aclose()
        cache.close()


async def _run_on_ray(
    the_plan: Plan,
    store: RunStore,
    directory: Path,
    executor: str,
    *,
    concurrency: int | None,
    on_progress: ProgressCallback | None,
) -> RunOutcome:
    from backchannel.orchestration._ray import execute_on_ray

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
