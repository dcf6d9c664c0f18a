"""The Ray executor: conversations run as tasks on a Ray cluster's workers; the driver stays the
single writer of the run store and the response cache.

One async actor per worker CPU builds its own backends (endpoint clients, or an embedded model on
its own node) with an equal share of every in-flight bound, so the bounds hold across the
cluster. A conversation's task takes the cached answers the driver holds for it and streams
every new answer back as it arrives, then its events; the driver writes the answers to the cache
at once and commits the conversation when its events come. A worker lost mid-task loses nothing
already streamed: the driver runs the conversation again on a live worker, its answers so far
replayed from the cache, and stores it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backchannel.backends import (
    LLMClient,
    RawCompletion,
    ResponseCache,
    UsageMeter,
    build_client,
    current_conversation,
)
from backchannel.engine import ConversationSpec, Event, run_conversation
from backchannel.errors import BackendUnavailable
from backchannel.experiment import LoadedExperiment
from backchannel.orchestration._checks import import_ray

if TYPE_CHECKING:
    from backchannel.orchestration._plan import Plan
    from backchannel.store import RunStore

MAX_ATTEMPTS = 12
"""Times one conversation is started before a run gives up on lost workers (with backoff of
up to RESTART_WAIT_S between starts: about a minute for a worker to come back)."""
RESTART_WAIT_S = 5.0
CONVERSATIONS_PER_WORKER_SLOT = 4


class TaskCache(ResponseCache):
    """A worker's response cache: the answers shipped with each running conversation, and the
    new ones it collects for the driver. Keyed by the conversation the call belongs to."""

    def __init__(self) -> None:  # no SQLite file on a worker
        self.path = None  # type: ignore[assignment]
        self.shipped: dict[str, dict[str, RawCompletion]] = {}
        self.fresh: dict[str, asyncio.Queue[tuple[str, str, RawCompletion]]] = {}

    def get(self, key: str) -> RawCompletion | None:
        conversation = current_conversation()
        if conversation is None:
            return None
        return self.shipped.get(conversation, {}).get(key)

    def put(self, key: str, model: str, completion: RawCompletion) -> None:
        conversation = current_conversation()
        if conversation is not None and conversation in self.fresh:
            self.fresh[conversation].put_nowait((key, model, completion))

    def __len__(self) -> int:
        return sum(len(entries) for entries in self.shipped.values())

    def close(self) -> None:
        self.shipped.clear()


@dataclass
class Finished:
    """What a task sends back at its end: what the driver stores for the conversation."""

    conversation_id: str
    position: int
    status: str
    error: str | None
    events: list[Event]
    usage: UsageMeter
    meta: dict[str, Any]
    labels: list[Any]
    unavailable: str | None = None
    """Set when no backend could serve (the run stops, as with the asyncio executor)."""


@dataclass
class Answer:
    """One new answer, streamed to the driver as soon as the worker has it."""

    key: str
    model: str
    completion: RawCompletion


class ConversationWorker:
    """The body of a worker actor: one client for all the conversations it runs at once."""

    def __init__(
        self, loaded: LoadedExperiment, models: list[str], concurrency: int | None, workers: int
    ) -> None:
        self._loaded = loaded
        self._cache = TaskCache()
        experiment = loaded.experiment
        self._client: LLMClient = build_client(
            models,
            endpoints=experiment.endpoints,
            local=experiment.local,
            cache=self._cache,
            retry=experiment.retry,
            max_in_flight=concurrency,
            max_reasks=experiment.max_reasks,
            model_settings=experiment.model_settings(),
            population=experiment.population,
            population_rules=loaded.paradigm.population_book(),
            workers=workers,
        )

    def pid(self) -> int:
        return os.getpid()

    async def run(
        self,
        spec: ConversationSpec,
        position: int,
        settings: Any,
        shipped: dict[str, RawCompletion],
    ) -> AsyncIterator[Answer | Finished]:
        cid = spec.conversation_id
        self._cache.shipped[cid] = shipped
        queue: asyncio.Queue[tuple[str, str, RawCompletion]] = asyncio.Queue()
        self._cache.fresh[cid] = queue
        task = asyncio.get_running_loop().create_task(
            run_conversation(
                spec,
                position,
                self._loaded.paradigm.run,
                settings,
                self._client,
                self._loaded.experiment.seed,
            )
        )
        try:
            while not task.done() or not queue.empty():
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    key, model, completion = getter.result()
                    yield Answer(key, model, completion)
                else:
                    getter.cancel()
            try:
                outcome = task.result()
            except BackendUnavailable as error:
                yield Finished(cid, position, "failed", None, [], UsageMeter(), {}, [], str(error))
                return
            context = outcome.context
            kept = outcome.status != "failed"
            yield Finished(
                cid,
                position,
                outcome.status,
                outcome.error,
                list(context.log.events) if kept else [],
                context.usage,
                context.meta,
                list(context.labels) if kept else [],
            )
        finally:
            if not task.done():
                task.cancel()
            self._cache.shipped.pop(cid, None)
            self._cache.fresh.pop(cid, None)

    async def close(self) -> None:
        await self._client.aclose()


def _connect(ray: Any, executor: str) -> bool:
    """Connect to (or start) the cluster; True when this call started the connection."""
    if ray.is_initialized():
        return False
    if executor.startswith("ray://"):
        ray.init(address=executor, log_to_driver=False)
    else:
        ray.init(log_to_driver=False)
    return True


async def execute_on_ray(
    the_plan: Plan,
    store: RunStore,
    cache: ResponseCache,
    *,
    executor: str,
    concurrency: int | None,
    usage: UsageMeter,
    on_progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    on_workers: Callable[[list[int]], None] | None = None,
) -> dict[str, int]:
    """Run the plan's remaining conversations on Ray; returns counts of done, incomplete, failed.

    `workers` defaults to the cluster's CPUs; `usage` accumulates every stored conversation's;
    `on_workers` gets the worker processes' ids once they run.
    """
    ray = import_ray()
    started = _connect(ray, executor)
    todo = the_plan.todo
    counts = {"done": 0, "incomplete": 0, "failed": 0}
    if not todo:
        return counts
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    per_worker = max(1, CONVERSATIONS_PER_WORKER_SLOT * (concurrency or 64) // count)
    actor_class = ray.remote(num_cpus=1, max_restarts=-1, max_concurrency=per_worker)(
        ConversationWorker
    )
    models = sorted(the_plan.models)
    actors = [actor_class.remote(the_plan.loaded, models, concurrency, count) for _ in range(count)]
    if on_workers is not None:
        on_workers([int(pid) for pid in await asyncio.gather(*(a.pid.remote() for a in actors))])
    lost = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
    driver_answers: dict[str, dict[str, RawCompletion]] = {}
    unavailable: list[str] = []
    queue: asyncio.Queue[tuple[int, ConversationSpec]] = asyncio.Queue()
    for entry in todo:
        queue.put_nowait(entry)
    total = len(todo)

    async def run_one(actor: Any, position: int, spec: ConversationSpec) -> None:
        cid = spec.conversation_id
        settings = the_plan.settings_by_cell[spec.cell_key]
        for attempt in range(MAX_ATTEMPTS):
            shipped = dict(driver_answers.get(cid, {}))
            try:
                stream = actor.run.options(num_returns="streaming").remote(
                    spec, position, settings, shipped
                )
                async for ref in stream:
                    item = await ref
                    if isinstance(item, Answer):
                        cache.put(item.key, item.model, item.completion)
                        driver_answers.setdefault(cid, {})[item.key] = item.completion
                    else:
                        _store(item, spec)
                        return
            except lost:
                if attempt + 1 == MAX_ATTEMPTS:
                    raise
                await asyncio.sleep(min(RESTART_WAIT_S, 0.1 * 2**attempt))
                continue  # the actor restarts; run the conversation again

    def _store(finished: Finished, spec: ConversationSpec) -> None:
        if finished.unavailable is not None:
            unavailable.append(finished.unavailable)
            raise BackendUnavailable(finished.unavailable)
        store.commit_conversation(
            spec,
            finished.position,
            finished.events,
            finished.usage,
            finished.meta,
            labels=finished.labels,
            status=finished.status,
            error=finished.error,
        )
        driver_answers.pop(spec.conversation_id, None)
        usage.merge(finished.usage)
        counts[finished.status] += 1
        if on_progress is not None:
            on_progress(sum(counts.values()), total)

    async def lane(actor: Any) -> None:
        while True:
            try:
                position, spec = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await run_one(actor, position, spec)

    lanes = [asyncio.create_task(lane(actor)) for actor in actors for _ in range(per_worker)][
        : max(1, total)
    ]
    try:
        await asyncio.gather(*lanes)
    finally:
        for task in lanes:
            task.cancel()
        await asyncio.gather(*lanes, return_exceptions=True)
        for actor in actors:
            with contextlib.suppress(*lost):
                await actor.close.remote()
            ray.kill(actor)
        if started:
            ray.shutdown()
    return counts
