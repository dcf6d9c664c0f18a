"""The run's second stage: refuse what cannot work before anything is written (a model nobody
serves, a missing key or model file, an unreachable server, a damaged cache, an executor that
is not installed). Each check raises a one-line ConfigError, RunDirectoryError or
BackendUnavailable naming the fix."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from backchannel.backends import SMALL_MODEL_WARNING, resolve_routes
from backchannel.errors import ConfigError, RunDirectoryError
from backchannel.orchestration._plan import Plan

INSTALL_HINT = "the Ray executor needs Ray; install it with: pip install 'backchannel[ray]'"


def import_ray() -> Any:
    """The `ray` module, or a ConfigError naming the install command."""
    try:
        import ray
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return ray


def check_executor(executor: str) -> None:
    """Raise ConfigError unless `executor` is `asyncio`, `ray` or `ray://HOST:PORT` with Ray
    installed."""
    if executor == "asyncio":
        return
    if executor != "ray" and not executor.startswith("ray://"):
        raise ConfigError(
            f"unknown executor {executor!r}; use asyncio, ray (a local or RAY_ADDRESS cluster) "
            "or ray://HOST:PORT"
        )
    import_ray()


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


def check_cache(path: Path) -> None:
    """Refuse a damaged response cache before the run directory is touched."""
    from backchannel._sqlite import damage
    from backchannel.backends import damaged_cache_message

    if path.exists():
        problem = damage(path)
        if problem is not None:
            raise RunDirectoryError(damaged_cache_message(path, problem))


def small_model_warning(models: set[str]) -> str | None:
    return SMALL_MODEL_WARNING if "local/smollm2" in models else None
