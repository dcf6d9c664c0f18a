"""How many calls paired arms share: each pair's conversations run on the scripted sim.

A scripted answer is fixed by the request, so two arms' calls come out alike exactly when
their prompts, settings and seeds are: what a real run makes once and answers from the cache
in the other arm. Real answers can only coincide more often (two different prompts giving the
same text), so the count is a floor. Nothing is called and nothing is stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from backchannel.backends import scripted_client
from backchannel.engine import ConversationSpec, run_conversation
from backchannel.experiment import LoadedExperiment


def pair_groups(specs: Sequence[ConversationSpec]) -> list[list[ConversationSpec]]:
    """The conversations of each pair (same item, replicate and other factors), two or more."""
    groups: dict[int, list[ConversationSpec]] = {}
    for spec in specs:
        if spec.call_seed is not None:
            groups.setdefault(spec.call_seed, []).append(spec)
    return [group for group in groups.values() if len(group) > 1]


def predict_shared(
    loaded: LoadedExperiment,
    specs: Sequence[ConversationSpec],
    settings_by_cell: Mapping[str, Any],
) -> int | None:
    """Calls of these conversations that another arm of their pair makes alike; None when it
    cannot be predicted here (inside a running event loop)."""
    groups = pair_groups(specs)
    if not groups:
        return 0
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_shared(loaded, groups, settings_by_cell))
    return None


async def _shared(
    loaded: LoadedExperiment,
    groups: list[list[ConversationSpec]],
    settings_by_cell: Mapping[str, Any],
) -> int:
    paradigm = loaded.paradigm
    shared = 0
    for group in groups:
        models: set[str] = set()
        for spec in group:
            models |= paradigm.models(settings_by_cell[spec.cell_key])
        client = scripted_client(models)
        for spec in group:
            outcome = await run_conversation(
                spec,
                0,
                paradigm.run,
                settings_by_cell[spec.cell_key],
                client,
                loaded.experiment.seed,
            )
            shared += int(outcome.context.meta.get("shared_calls", 0))
        await client.aclose()
    return shared
