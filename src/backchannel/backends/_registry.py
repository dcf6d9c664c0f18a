"""Models by `provider/model` string: each model's provider (built-in, registered or installed;
see `_providers`) checks it and says how to serve it, and one wrapped backend stack is built per
endpoint. Providers are imported lazily, so an optional SDK is only needed when its models are
used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from backchannel.backends._agent_slots import AgentOrderBackend, AgentSlots
from backchannel.backends._base import Backend
from backchannel.backends._cache import CachedBackend, ResponseCache
from backchannel.backends._client import LLMClient, Route
from backchannel.backends._limit import LimitedBackend, PriorityLimiter
from backchannel.backends._population import PopulationBook, PopulationParams
from backchannel.backends._profile import ModelSettings, model_settings_for
from backchannel.backends._providers import (
    Provider,
    ProviderRoute,
    RouteContext,
    get_provider,
    provider_names,
)
from backchannel.backends._replicas import ReplicatedBackend
from backchannel.backends._retry import RetryingBackend, RetryPolicy
from backchannel.backends._settings import EndpointSettings, LocalSettings
from backchannel.errors import ConfigError


def _not_a_model(model: str) -> ConfigError:
    return ConfigError(
        f"model {model!r} is not 'provider/model' with provider one of "
        f"{', '.join(provider_names())} (for example openai/gpt-4o-mini, local/smollm2, sim)"
    )


def _bare(provider: Provider | None) -> bool:
    """Whether the provider's name alone is a model (`sim`, `sim#label`)."""
    return bool(getattr(provider, "bare", False))


def split_model(model: str) -> tuple[str, str]:
    """`provider/name` -> (provider, name). A provider that allows it is a model by its name
    alone (`sim` -> ("sim", "")) or with a label (`sim#a/b` -> ("sim", "#a/b"))."""
    hash_at, slash_at = model.find("#"), model.find("/")
    if hash_at >= 0 and (slash_at < 0 or hash_at < slash_at):
        base, label = model[:hash_at], model[hash_at + 1 :]
        if label and base in provider_names() and _bare(get_provider(base)):
            return base, model[hash_at:]
        raise _not_a_model(model)
    if slash_at < 0:
        if model in provider_names() and _bare(get_provider(model)):
            return model, ""
        raise _not_a_model(model)
    head, name = model[:slash_at], model[slash_at + 1 :]
    if head not in provider_names() or (not name and not _bare(get_provider(head))):
        raise _not_a_model(model)
    return head, name


def check_model(model: str) -> None:
    split_model(model)


def resolve_routes(
    models: Iterable[str],
    *,
    endpoints: Sequence[EndpointSettings] = (),
    local: LocalSettings = LocalSettings(),
    max_in_flight: int | None = None,
    model_settings: Sequence[ModelSettings] = (),
    population: PopulationParams | None = None,
    population_rules: PopulationBook | None = None,
    workers: int = 1,
) -> dict[str, ProviderRoute]:
    """Check every model's provider, endpoint, key and model file; raise ConfigError early.

    Builds nothing, so a command can check its models before it writes anything.
    `model_settings` are per-model call defaults (first matching glob wins). `sim/population`
    answers with `population_rules` (the run's paradigm's, a layer's) under the `population`
    parameters. With `workers` processes each building its own client, each gets an equal share
    of every in-flight bound, so the bounds hold across all of them. Each route's key starts
    with its provider's name, so two providers never share a backend.
    """
    if workers < 1:
        raise ValueError("workers must be at least 1")
    specs: dict[str, ProviderRoute] = {}
    memo: dict[str, object] = {}
    for model in sorted(set(models)):
        prefix, name = split_model(model)
        provider = get_provider(prefix)
        if provider is None:  # split_model found it; a name unregistered meanwhile
            raise _not_a_model(model)
        context = RouteContext(
            endpoints=endpoints,
            local=local,
            max_in_flight=max_in_flight,
            defaults=model_settings_for(model, model_settings),
            population=population,
            population_rules=population_rules,
            workers=workers,
            memo=memo,
        )
        route = provider.route(name, context)
        specs[model] = replace(
            route,
            key=(prefix, *route.key),
            defaults=route.defaults if route.defaults is not None else context.defaults,
        )
    return specs


def in_flight_bound(specs: Mapping[str, ProviderRoute]) -> int | None:
    """The calls the routes can have in flight at once, summed over their distinct servers;
    None when no route is bounded (the simulated backends answer at once)."""
    bounds = {spec.key: spec.bound for spec in specs.values() if spec.bound is not None}
    return sum(bounds.values()) if bounds else None


async def check_reachable(
    models: Iterable[str],
    *,
    endpoints: Sequence[EndpointSettings] = (),
    local: LocalSettings = LocalSettings(),
    model_settings: Sequence[ModelSettings] = (),
) -> None:
    """One cheap request per server the models use (each route's `check`); raises
    BackendUnavailable naming the endpoint and the fix when one cannot serve anything."""
    specs = resolve_routes(models, endpoints=endpoints, local=local, model_settings=model_settings)
    checked: set[tuple[str, ...]] = set()
    for spec in specs.values():
        if spec.check is None or spec.key in checked:
            continue
        checked.add(spec.key)
        backend = spec.build()
        try:
            await spec.check(backend)
        finally:
            await backend.aclose()


def build_client(
    models: Iterable[str],
    *,
    endpoints: Sequence[EndpointSettings] = (),
    local: LocalSettings = LocalSettings(),
    cache: ResponseCache | None = None,
    retry: RetryPolicy = RetryPolicy(),
    max_in_flight: int | None = None,
    max_reasks: int = 2,
    model_settings: Sequence[ModelSettings] = (),
    population: PopulationParams | None = None,
    population_rules: PopulationBook | None = None,
    workers: int = 1,
) -> LLMClient:
    """One wrapped backend per endpoint (shared by every model it serves), one route per model;
    `workers` as for `resolve_routes`."""
    stacks: dict[tuple[str, ...], Backend] = {}
    routes: dict[str, Route] = {}
    replica_sets: list[ReplicatedBackend] = []
    specs = resolve_routes(
        models,
        endpoints=endpoints,
        local=local,
        max_in_flight=max_in_flight,
        model_settings=model_settings,
        population=population,
        population_rules=population_rules,
        workers=workers,
    )
    for model, spec in specs.items():
        if spec.key not in stacks:
            limiter = PriorityLimiter(spec.limit) if spec.limit is not None else None
            built = spec.build()
            if isinstance(built, ReplicatedBackend):
                replica_sets.append(built)
            stacks[spec.key] = _wrap(
                built,
                cache,
                limiter,
                retry if spec.retried else None,
                spec.cache_identity,
            )
        routes[model] = Route(stacks[spec.key], spec.price, spec.defaults or ModelSettings())
    return LLMClient(routes, max_reasks=max_reasks, replica_sets=replica_sets)


def _wrap(
    raw: Backend,
    cache: ResponseCache | None,
    limiter: PriorityLimiter | None,
    retry: RetryPolicy | None,
    cache_identity: str | None = None,
) -> Backend:
    backend: Backend = raw
    if retry is not None:
        backend = RetryingBackend(backend, retry)
    if limiter is not None:
        backend = LimitedBackend(backend, limiter)
    slots = getattr(raw, "agent_slots", None)
    if isinstance(slots, AgentSlots):
        # An agent's call waits for its previous one before it takes an in-flight slot.
        backend = AgentOrderBackend(backend, slots)
    if cache is not None:
        backend = CachedBackend(backend, cache, cache_identity)
    return backend
