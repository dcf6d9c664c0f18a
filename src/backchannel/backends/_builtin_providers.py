"""The built-in providers, registered like any other: `sim` (scripted, and `sim/population`),
`local` (the embedded llama.cpp server) and `openai` (any OpenAI-compatible server)."""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Sequence

from backchannel.backends._adaptive import AdaptiveLimiter
from backchannel.backends._base import Backend
from backchannel.backends._errors import FatalBackendError, TransientBackendError
from backchannel.backends._limit import PriorityLimiter
from backchannel.backends._population import (
    POPULATION,
    PopulationBackend,
    PopulationBook,
    PopulationParams,
    SimulatedPopulation,
)
from backchannel.backends._providers import ProviderRoute, RouteContext
from backchannel.backends._replicas import Replica, ReplicatedBackend
from backchannel.backends._settings import EndpointSettings
from backchannel.backends._urls import url_problem
from backchannel.errors import BackendUnavailable, ConfigError


class SimProvider:
    """`sim` and `sim/<name>`: scripted answers; `sim/population`: a simulated population with
    planted parameters. `#<label>` tells distinct simulated models apart."""

    bare = True
    """`sim` alone (and `sim#label`) is a model."""

    def route(self, name: str, context: RouteContext) -> ProviderRoute:
        base = name.partition("#")[0]
        if base == POPULATION:
            simulated = context.memo.get(POPULATION)
            if simulated is None:
                simulated = _simulated(context.population_rules, context.population)
                context.memo[POPULATION] = simulated
            return ProviderRoute(
                (POPULATION,),
                functools.partial(PopulationBackend, simulated),
                cache_identity=f"population|{simulated.identity()}",
            )
        from backchannel.backends._sim import SimBackend

        try:
            SimBackend(base)
        except ValueError as error:
            raise ConfigError(str(error)) from error
        return ProviderRoute((base,), functools.partial(SimBackend, base))


def _simulated(
    rules: PopulationBook | None, params: PopulationParams | None
) -> SimulatedPopulation:
    """The population's rules bound to its parameters; ConfigError when they do not fit."""
    from pydantic import ValidationError

    try:
        return SimulatedPopulation(rules, params)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"population.{where}: {first['msg']}") from None
    except ValueError as error:
        raise ConfigError(str(error)) from None


class LocalProvider:
    """`local/smollm2` or `local/<path.gguf>`: the embedded llama.cpp server."""

    def route(self, name: str, context: RouteContext) -> ProviderRoute:
        from backchannel.backends._local import LocalBackend, resolve_model_path

        local = context.local
        path = resolve_model_path(name)
        limit = context.share(context.max_in_flight or local.max_in_flight or local.parallel)
        return ProviderRoute(
            (str(path),),
            functools.partial(
                LocalBackend,
                path,
                parallel=local.parallel,
                context_per_slot=local.context_per_slot,
                threads=local.threads,
                slot_affinity=local.slot_affinity,
            ),
            limit=limit,
            retried=True,
            bound=limit,
        )


class OpenAIProvider:
    """`openai/<model>`: any OpenAI-compatible server, chosen by the first endpoint whose
    `models` glob matches (else OPENAI_BASE_URL or the hosted API)."""

    def route(self, name: str, context: RouteContext) -> ProviderRoute:
        model = f"openai/{name}"
        endpoint = _endpoint_for(model, context.endpoints)
        urls = endpoint.urls or (os.environ.get("OPENAI_BASE_URL"),)
        for url in urls:
            problem = None if url is None else url_problem(url)
            if problem is not None:
                source = (
                    "the endpoint's base_urls"
                    if endpoint.base_urls
                    else "the endpoint's base_url"
                    if endpoint.base_url
                    else "OPENAI_BASE_URL"
                )
                raise ConfigError(f"{source}: {problem}")
        api_key = _api_key(endpoint)
        if urls[0] is None and not api_key:
            raise ConfigError(
                f"{model} would go to the hosted OpenAI API but no key is set; export "
                "OPENAI_API_KEY, or give the endpoint a base_url for a local server"
            )
        # Any replica's answer is the model's answer: the cache knows the set by its first URL.
        base_url = urls[0]
        limit = context.share(context.max_in_flight or endpoint.max_in_flight)
        replicated = len(urls) > 1 or endpoint.adaptive_in_flight
        return ProviderRoute(
            (*(url or "" for url in urls), api_key or "", endpoint.constrained),
            functools.partial(
                _build_replicas if replicated else _build_openai,
                urls=urls,
                api_key=api_key,
                endpoint=endpoint,
                limit=limit,
                minimum=min(context.share(endpoint.min_in_flight), limit),
            ),
            limit=None if replicated else limit,
            retried=True,
            price=endpoint.price,
            cache_identity=f"{base_url or 'openai'}|constrained={endpoint.constrained}",
            defaults=context.defaults.over_endpoint(endpoint.extra_body),
            bound=limit * len(urls),
            check=_check_reachable,
        )


def _endpoint_for(model: str, endpoints: Sequence[EndpointSettings]) -> EndpointSettings:
    """The first endpoint whose glob matches; with no endpoints, the SDK's environment defaults.

    When endpoints are listed, a model none of them matches is an error rather than a silent
    detour to OPENAI_BASE_URL or the hosted API.
    """
    for endpoint in endpoints:
        if fnmatch.fnmatchcase(model, endpoint.models):
            return endpoint
    if endpoints:
        patterns = ", ".join(repr(e.models) for e in endpoints)
        raise ConfigError(
            f"no endpoint serves {model} (endpoints match {patterns}); add an endpoint whose "
            f'`models` glob matches it, e.g. models: "openai/*"'
        )
    return EndpointSettings()


def _api_key(endpoint: EndpointSettings) -> str | None:
    if endpoint.api_key:
        return endpoint.api_key
    if endpoint.api_key_env:
        key = os.environ.get(endpoint.api_key_env)
        if not key:
            raise ConfigError(
                f"environment variable {endpoint.api_key_env} (the endpoint's api_key_env) is not "
                "set; export it with the API key"
            )
        return key
    return os.environ.get("OPENAI_API_KEY")


async def _check_reachable(backend: Backend) -> None:
    """One cheap request; with replicas, one that answers is enough (the others are drained
    when the run starts)."""
    from backchannel.backends._openai import OpenAIBackend

    servers = (
        [replica.backend for replica in backend.replicas]
        if isinstance(backend, ReplicatedBackend)
        else [backend]
    )
    try:
        unreachable: TransientBackendError | None = None
        for server in servers:
            assert isinstance(server, OpenAIBackend)
            try:
                await server.check_reachable()
            except TransientBackendError as error:
                unreachable = unreachable or error
                continue
            unreachable = None
            break
        if unreachable is not None:
            raise BackendUnavailable(
                f"{unreachable}: the server is unreachable, so nothing was written; start "
                "it or fix the endpoint's base_url (or OPENAI_BASE_URL)"
                + ("; no replica of base_urls answered" if len(servers) > 1 else "")
            )
    except FatalBackendError as error:
        raise BackendUnavailable(f"{error}; nothing was written") from None


def _build_openai(
    *,
    urls: tuple[str | None, ...],
    api_key: str | None,
    endpoint: EndpointSettings,
    limit: int,
    minimum: int,
) -> Backend:
    from backchannel.backends._openai import OpenAIBackend

    return OpenAIBackend(
        base_url=urls[0],
        api_key=api_key,
        timeout_s=endpoint.timeout_s,
        constrained=endpoint.constrained,
    )


def _build_replicas(
    *,
    urls: tuple[str | None, ...],
    api_key: str | None,
    endpoint: EndpointSettings,
    limit: int,
    minimum: int,
) -> Backend:
    """One OpenAI client and one in-flight bound (fixed or adaptive) per replica."""
    from backchannel.backends._openai import OpenAIBackend

    replicas = []
    for url in urls:
        raw = OpenAIBackend(
            base_url=url,
            api_key=api_key,
            timeout_s=endpoint.timeout_s,
            constrained=endpoint.constrained,
        )
        limiter: PriorityLimiter = PriorityLimiter(limit)
        if endpoint.adaptive_in_flight:
            limiter = AdaptiveLimiter(minimum, limit)
        replicas.append(Replica(url or raw.endpoint, raw, limiter, raw.probe))
    return ReplicatedBackend(replicas, replicas[0].backend.endpoint)
