"""Providers: what serves the models of one `provider/...` prefix. The built-in ones (`openai`,
`local`, `sim`) and any other are registered the same way: by name in this process
(`register_provider`) or by an installed package's entry point in the group
`backchannel.providers`, and imported on first use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from backchannel._extensions import Registry
from backchannel.backends._base import Backend
from backchannel.backends._population import PopulationBook, PopulationParams
from backchannel.backends._profile import ModelSettings
from backchannel.backends._settings import EndpointSettings, LocalSettings
from backchannel.backends._usage import Price
from backchannel.errors import ConfigError

ENTRY_POINT_GROUP = "backchannel.providers"

BUILT_IN: dict[str, str] = {
    "openai": "backchannel.backends._builtin_providers:OpenAIProvider",
    "local": "backchannel.backends._builtin_providers:LocalProvider",
    "sim": "backchannel.backends._builtin_providers:SimProvider",
}


@dataclass(frozen=True, slots=True)
class RouteContext:
    """What a provider may read when it routes one model: the experiment's serving settings."""

    endpoints: Sequence[EndpointSettings] = ()
    local: LocalSettings = LocalSettings()
    max_in_flight: int | None = None
    """`--concurrency`: the in-flight bound for each endpoint, when given."""
    defaults: ModelSettings = ModelSettings()
    """The model's call defaults from the experiment's `models:` rules."""
    population: PopulationParams | None = None
    population_rules: PopulationBook | None = None
    workers: int = 1
    """Processes that each build their own client (Ray workers): bounds are shared among them."""
    memo: dict[str, Any] = field(default_factory=dict, compare=False)
    """Shared by every model of one resolution: something built once for all of them."""

    def share(self, limit: int) -> int:
        """One worker's part of an in-flight bound (at least one call each)."""
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        return max(1, limit // self.workers)


@dataclass(frozen=True, slots=True)
class ProviderRoute:
    """How one model is served, checked but not yet built (no client, no server started)."""

    key: tuple[str, ...]
    """Models with the same provider and key share one backend (and its in-flight bound)."""
    build: Callable[[], Backend]
    limit: int | None = None
    """In-flight calls to the built backend; None: unbounded (or bounded inside it)."""
    retried: bool = False
    """Whether transient errors are retried (servers: yes; instant local backends: no)."""
    price: Price = Price()
    cache_identity: str | None = None
    """Names the backend in response-cache keys; None: the backend's `endpoint`."""
    defaults: ModelSettings | None = None
    """Call defaults; None: the context's."""
    bound: int | None = None
    """The most calls in flight to this route's servers at once (all replicas); None: none."""
    check: Callable[[Backend], Awaitable[None]] | None = None
    """One cheap request to the built backend before a run writes anything; raises
    BackendUnavailable naming the fix. None: nothing to reach."""


@runtime_checkable
class Provider(Protocol):
    """Serves the models `NAME/...`: `route` checks one model (its settings, keys, files) and
    says how to build its backend, raising ConfigError with the fix when it cannot be served."""

    def route(self, name: str, context: RouteContext) -> ProviderRoute: ...


def _provider(value: Any, what: str) -> Provider:
    if isinstance(value, type):
        try:
            value = value()
        except TypeError as error:
            raise ConfigError(f"{what}: cannot be created without arguments ({error})") from None
    if not isinstance(value, Provider):
        raise ConfigError(f"{what}: {value!r} has no route(name, context) method")
    return value


REGISTRY: Registry[Provider] = Registry(
    "provider", ENTRY_POINT_GROUP, BUILT_IN, _provider, "write it as package.module:ProviderClass"
)


def register_provider(name: str, provider: Provider | type[Provider]) -> None:
    """Serve the models `name/...` with `provider` (an object with `route(name, context)`, or
    its class) in this process; ConfigError when a built-in or installed provider has the name."""
    REGISTRY.register(name, _provider(provider, f"provider {name!r}"))


def unregister_provider(name: str) -> None:
    """Remove a provider registered with `register_provider`."""
    REGISTRY.unregister(name)


def provider_names() -> list[str]:
    """Every provider prefix this installation knows."""
    return REGISTRY.names()


def get_provider(name: str) -> Provider | None:
    """The provider of the prefix `name`, imported on first use; None when none has it."""
    return REGISTRY.get(name)
