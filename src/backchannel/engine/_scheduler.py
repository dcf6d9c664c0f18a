"""Runs many conversations at once on one event loop.

Turns within a conversation stay in order; conversations overlap freely, bounded by `max_active`;
the per-endpoint in-flight limits (with critical-path priority) keep servers saturated without
flooding them. The first BackendUnavailable stops everything: no conversation could succeed.

How many conversations are active is sized from what the endpoints can take: a few per call
the run may have in flight, so every slot finds a waiting call, but no more, so on a small
server conversations finish steadily (and a killed run loses only the few in progress) instead
of hundreds advancing together and none finishing for minutes.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from backchannel.backends import LLMClient, count_shared_calls
from backchannel.engine._conversation import ConversationContext, ConversationSpec
from backchannel.errors import BackendUnavailable

CONVERSATIONS_PER_CALL_SLOT = 4
"""Conversations kept active per call in flight: enough that a slot never waits for a turn
(a conversation's calls are mostly one chain; its probes come a few at once)."""
MIN_ACTIVE_CONVERSATIONS = 16
UNBOUNDED_IN_FLIGHT = 64
"""The calls in flight assumed for backends without a bound (the simulated ones, which answer
at once: the active set then only bounds memory)."""


def active_conversations(in_flight: int | None) -> int:
    """How many conversations run at once when the run's endpoints can take `in_flight` calls
    at once (None: no endpoint is bounded)."""
    slots = UNBOUNDED_IN_FLIGHT if in_flight is None else in_flight
    return max(MIN_ACTIVE_CONVERSATIONS, CONVERSATIONS_PER_CALL_SLOT * slots)


@dataclass
class ConversationOutcome:
    """A finished conversation: its context (events, usage, meta) and its status: `done`,
    `incomplete` (some calls failed after retries; stored, retried on resume) or `failed` (the
    protocol raised; nothing but the error is stored)."""

    spec: ConversationSpec
    position: int
    context: ConversationContext
    status: str
    error: str | None = None


async def run_conversation(
    spec: ConversationSpec,
    position: int,
    run: Callable[[ConversationContext[Any]], Awaitable[None]],
    settings: Any,
    client: LLMClient,
    experiment_seed: int,
) -> ConversationOutcome:
    """Run one conversation to the end; a bug in a protocol fails only this conversation."""
    context = ConversationContext(spec, settings, client, experiment_seed=experiment_seed)
    try:
        with client.conversation(spec.conversation_id) as affinity, count_shared_calls() as shared:
            await run(context)
            await context.drain()
        if affinity.calls:
            # Which replica served how many of its calls (more than one only after a failure).
            context.meta["replica_calls"] = dict(sorted(affinity.calls.items()))
        if shared.count:
            # Calls another conversation's call answered (paired arms share their common calls).
            context.meta["shared_calls"] = shared.count
    except BackendUnavailable:
        await context.cancel_background()
        raise
    except asyncio.CancelledError:
        await context.cancel_background()
        raise
    except Exception as error:
        await context.cancel_background()
        detail = "".join(traceback.format_exception(error)).strip()
        return ConversationOutcome(spec, position, context, "failed", detail)
    failed_calls = [e for e in context.log.events if e.status == "error"]
    if failed_calls:
        # Calls that failed after every retry (timeouts, server errors) are kept as data, but
        # the conversation is incomplete: a rerun retries it, replaying its answers from cache.
        first = failed_calls[0].meta.get("error", "a call failed")
        detail = f"{len(failed_calls)} call(s) failed after retries; first: {first}"
        return ConversationOutcome(spec, position, context, "incomplete", detail)
    return ConversationOutcome(spec, position, context, "done")


async def schedule(
    specs: Sequence[tuple[int, ConversationSpec]],
    start: Callable[[int, ConversationSpec], Awaitable[ConversationOutcome]],
    on_done: Callable[[ConversationOutcome], None],
    *,
    max_active: int,
) -> None:
    """Run `start` for every spec with at most `max_active` at once; `on_done` as each ends."""
    queue: asyncio.Queue[tuple[int, ConversationSpec]] = asyncio.Queue()
    for entry in specs:
        queue.put_nowait(entry)

    async def worker() -> None:
        while True:
            try:
                position, spec = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            on_done(await start(position, spec))

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(max_active, len(specs))))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
