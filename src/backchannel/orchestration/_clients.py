"""The clients a run calls its models through, built once from the experiment's endpoints, local
server, retry policy and generation rules, and how many conversations run at once on them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from backchannel.backends import (
    LLMClient,
    PopulationBook,
    ResponseCache,
    build_client,
    in_flight_bound,
    resolve_routes,
)
from backchannel.engine import active_conversations
from backchannel.experiment import Experiment
from backchannel.orchestration._plan import Plan
from backchannel.store import CACHE_NAME


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
