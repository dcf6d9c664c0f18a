"""Providers by `provider/model` string, and the wrapped backend stack built for each endpoint.

Providers are imported lazily, so an optional SDK is only needed when its models are used.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from backchannel.backends._adaptive import AdaptiveLimiter
from backchannel.backends._agent_slots import AgentOrderBackend, AgentSlots
from backchannel.backends._base import Backend
from backchannel.backends._cache import CachedBackend, ResponseCache
from backchannel.backends._client import LLMClient, Route
from backchannel.backends._errors import FatalBackendError, TransientBackendError
from backchannel.backends._limit import LimitedBackend, PriorityLimiter
from backchannel.backends._population import (
    POPULATION,
    PopulationBackend,
    PopulationBook,
    PopulationParams,
    SimulatedPopulation,
)
from backchannel.backends._profile import ModelSettings, model_settings_for
from backchannel.backends._replica_urls import expand_urls
from backchannel.backends._replicas import Replica, ReplicatedBackend
from backchannel.backends._retry import RetryingBackend, RetryPolicy
from backchannel.backends._types import check_extra_body
from backchannel.backends._urls import url_problem
from backchannel.backends._usage import Price
from backchannel.errors import BackendUnavailable, ConfigError

PROVIDERS = ("openai", "local", "sim")


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    """An OpenAI-compatible server for the `openai/...` models whose names match `models`.

    The experiment file's `endpoints:` entries are validated into this type directly, so the
    fields, their defaults and their documentation exist once. `extra_body` holds server-specific
    request fields merged into every request to this endpoint (under the model's and the call's).
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    models: Annotated[str, Field(description="Glob over model strings, e.g. 'openai/llama-*'.")] = (
        "openai/*"
    )
    base_url: Annotated[
        str | None, Field(description="Server URL ending in /v1; else OPENAI_BASE_URL.")
    ] = None
    base_urls: Annotated[
        tuple[str, ...],
        Field(
            description="Several servers of the same model (replicas), instead of base_url; "
            "brace patterns name many at once, e.g. 'http://gpu{1..3}:{8000..8003}/v1'. Each "
            "conversation keeps to one replica; max_in_flight then bounds each replica."
        ),
    ] = ()
    api_key: Annotated[
        str | None, Field(description="The key itself (never stored); prefer api_key_env.")
    ] = field(default=None, repr=False)
    api_key_env: Annotated[
        str | None,
        Field(description="Name of the environment variable holding the key; else OPENAI_API_KEY."),
    ] = None
    max_in_flight: Annotated[
        int,
        Field(
            ge=1,
            description="In-flight requests (per replica); keep it well above the server's "
            "slots. With adaptive_in_flight, the upper limit.",
        ),
    ] = 64
    adaptive_in_flight: Annotated[
        bool,
        Field(
            description="Adapt the in-flight bound (AIMD): grow while latency holds, halve on "
            "rate limits (429) and timeouts, between min_in_flight and max_in_flight."
        ),
    ] = False
    min_in_flight: Annotated[
        int, Field(ge=1, description="Lower limit (and start) of an adaptive in-flight bound.")
    ] = 4
    timeout_s: Annotated[
        float,
        Field(gt=0, description="Seconds one request may take in all: connect, wait and body."),
    ] = 120.0
    constrained: Annotated[
        Literal["json_schema", "grammar", "none"],
        Field(
            description="Constrained decoding: json_schema (OpenAI, vLLM, SGLang), grammar "
            "(llama.cpp GBNF), none (validate and re-ask only)."
        ),
    ] = "json_schema"
    price: Annotated[Price, Field(description="US dollars per million tokens.")] = Price()
    extra_body: Annotated[
        Mapping[str, Any],
        Field(
            description="Server-specific request fields merged into every request to this "
            "endpoint (e.g. vLLM's min_p, repetition_penalty, chat_template_kwargs)."
        ),
    ] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if self.min_in_flight < 1:
            raise ValueError("min_in_flight must be at least 1")
        if self.adaptive_in_flight and self.min_in_flight > self.max_in_flight:
            raise ValueError(
                f"min_in_flight ({self.min_in_flight}) is above max_in_flight "
                f"({self.max_in_flight}); lower min_in_flight or raise max_in_flight"
            )
        if self.base_url is not None and self.base_urls:
            raise ValueError("give either base_url (one server) or base_urls (replicas), not both")
        object.__setattr__(self, "base_urls", expand_urls(self.base_urls))
        object.__setattr__(self, "extra_body", check_extra_body(self.extra_body))

    @property
    def urls(self) -> tuple[str, ...]:
        """The servers of this endpoint: its replicas, or its one base_url (or none: the SDK's
        environment default)."""
        if self.base_urls:
            return self.base_urls
        return (self.base_url,) if self.base_url is not None else ()


@dataclass(frozen=True, slots=True)
class LocalSettings:
    """The embedded llama.cpp server for `local/...` models (the experiment file's `local:`)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    parallel: Annotated[
        int, Field(ge=1, description="Parallel slots (requests decoded together).")
    ] = 4
    context_per_slot: Annotated[int, Field(ge=256, description="Context length of each slot.")] = (
        4096
    )
    threads: Annotated[int | None, Field(ge=1, description="CPU threads; default all cores.")] = (
        None
    )
    max_in_flight: Annotated[
        int | None,
        Field(ge=1, description="In-flight requests; default the slots, so turns go first."),
    ] = None
    slot_affinity: Annotated[
        bool,
        Field(
            description="Each agent's calls one after another on its own slot, so each reuses "
            "its previous prompt from the server's cache."
        ),
    ] = True


def split_model(model: str) -> tuple[str, str]:
    """`provider/name` -> (provider, name); bare `sim` is the built-in scripted backend."""
    if model == "sim":
        return "sim", ""
    if model.startswith("sim#") and len(model) > 4:
        return "sim", model[3:]
    provider, sep, name = model.partition("/")
    if not sep or provider not in PROVIDERS or (provider != "sim" and not name):
        raise ConfigError(
            f"model {model!r} is not 'provider/model' with provider one of {', '.join(PROVIDERS)} "
            "(for example openai/gpt-4o-mini, local/smollm2, sim)"
        )
    return provider, name


def check_model(model: str) -> None:
    split_model(model)


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


@dataclass(frozen=True, slots=True)
class _RouteSpec:
    """How one model is served, checked but not yet built (no client, no server started)."""

    key: tuple[str, ...]
    build: Callable[[], Backend]
    limit: int | None
    retried: bool
    price: Price
    cache_identity: str | None = None
    defaults: ModelSettings = ModelSettings()
    bound: int | None = None
    """The most calls in flight to this route's servers at once (all replicas); None: none."""


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
) -> dict[str, _RouteSpec]:
    """Check every model's provider, endpoint, key and model file; raise ConfigError early.

    Builds nothing, so a command can check its models before it writes anything.
    `model_settings` are per-model call defaults (first matching glob wins). `sim/population`
    answers with `population_rules` (the run's paradigm's, a layer's) under the `population`
    parameters. With `workers` processes each building its own client, each gets an equal share
    of every in-flight bound, so the bounds hold across all of them.
    """
    specs: dict[str, _RouteSpec] = {}
    simulated: SimulatedPopulation | None = None
    for model in sorted(set(models)):
        provider, name = split_model(model)
        defaults = model_settings_for(model, model_settings)
        if provider == "sim" and name.partition("#")[0] == POPULATION:
            if simulated is None:
                simulated = _simulated(population_rules, population)
            specs[model] = _RouteSpec(
                ("sim", POPULATION),
                functools.partial(PopulationBackend, simulated),
                None,
                False,
                Price(),
                cache_identity=f"population|{simulated.identity()}",
                defaults=defaults,
            )
        elif provider == "sim":
            from backchannel.backends._sim import SimBackend

            # `#label` tells distinct simulated models apart; the backend is the named one.
            base = name.partition("#")[0]
            try:
                SimBackend(base)
            except ValueError as error:
                raise ConfigError(str(error)) from error
            specs[model] = _RouteSpec(
                ("sim", base),
                functools.partial(SimBackend, base),
                None,
                False,
                Price(),
                defaults=defaults,
            )
        elif provider == "local":
            from backchannel.backends._local import LocalBackend, resolve_model_path

            path = resolve_model_path(name)
            specs[model] = _RouteSpec(
                ("local", str(path)),
                functools.partial(
                    LocalBackend,
                    path,
                    parallel=local.parallel,
                    context_per_slot=local.context_per_slot,
                    threads=local.threads,
                    slot_affinity=local.slot_affinity,
                ),
                _share(max_in_flight or local.max_in_flight or local.parallel, workers),
                True,
                Price(),
                defaults=defaults,
                bound=_share(max_in_flight or local.max_in_flight or local.parallel, workers),
            )
        else:
            endpoint = _endpoint_for(model, endpoints)
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
            limit = _share(max_in_flight or endpoint.max_in_flight, workers)
            replicated = len(urls) > 1 or endpoint.adaptive_in_flight
            specs[model] = _RouteSpec(
                ("openai", *(url or "" for url in urls), api_key or "", endpoint.constrained),
                functools.partial(
                    _build_replicas if replicated else _build_openai,
                    urls=urls,
                    api_key=api_key,
                    endpoint=endpoint,
                    limit=limit,
                    minimum=min(_share(endpoint.min_in_flight, workers), limit),
                ),
                None if replicated else limit,
                True,
                endpoint.price,
                cache_identity=f"{base_url or 'openai'}|constrained={endpoint.constrained}",
                defaults=defaults.over_endpoint(endpoint.extra_body),
                bound=limit * len(urls),
            )
    return specs


def in_flight_bound(specs: Mapping[str, _RouteSpec]) -> int | None:
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
    """One cheap request per OpenAI-compatible endpoint the models use; raises
    BackendUnavailable naming the endpoint and the fix when one cannot serve anything."""
    from backchannel.backends._openai import OpenAIBackend

    specs = resolve_routes(models, endpoints=endpoints, local=local, model_settings=model_settings)
    checked: set[tuple[str, ...]] = set()
    for spec in specs.values():
        if spec.key[0] != "openai" or spec.key[:3] in checked:
            continue
        checked.add(spec.key[:3])
        backend = spec.build()
        # Replicas: one that answers is enough (the others are drained when the run starts).
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
        routes[model] = Route(stacks[spec.key], spec.price, spec.defaults)
    return LLMClient(routes, max_reasks=max_reasks, replica_sets=replica_sets)


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


def _share(limit: int, workers: int) -> int:
    """One worker's part of an in-flight bound shared by `workers` (at least one call each)."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    return max(1, limit // workers)


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
