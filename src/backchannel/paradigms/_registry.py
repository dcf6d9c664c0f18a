"""Paradigms by name: the built-in ones, `package.module:Class` paths, and third-party packages
that register under the entry-point group `backchannel.paradigms`. All are imported lazily, by
the loader providers share (`backchannel._extensions`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backchannel._extensions import Registry
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.paradigms._base import Paradigm

ENTRY_POINT_GROUP = "backchannel.paradigms"

BUILT_IN: dict[str, str] = {
    "discussion": "backchannel.paradigms.discussion:Discussion",
    "peer_pressure": "backchannel.paradigms.peer_pressure:PeerPressure",
    "dyad": "backchannel.paradigms.dyad:Dyad",
    "council": "backchannel.paradigms.council:Council",
    "testimony": "backchannel.paradigms.testimony:Testimony",
}
PARADIGMS = BUILT_IN  # the built-in names (kept for callers that list them)


def _paradigm_class(value: Any, what: str) -> type[Paradigm[Any]]:
    from backchannel.paradigms._base import Paradigm

    if not (isinstance(value, type) and issubclass(value, Paradigm)):
        raise ConfigError(f"{what}: {value!r} is not a subclass of backchannel.Paradigm")
    return value


REGISTRY: Registry[type[Paradigm[Any]]] = Registry(
    "paradigm", ENTRY_POINT_GROUP, BUILT_IN, _paradigm_class, "write it as package.module:ClassName"
)


def registered() -> dict[str, str]:
    """Every paradigm name this installation knows (built-in ones and entry points), with the
    `package.module:Class` target of its first source."""
    return {name: sources[0].target for name, sources in sorted(REGISTRY.sources().items())}


def get_paradigm(name: str) -> Paradigm[Any]:
    """The paradigm of an experiment file's `paradigm:` field: a registered name (built-in or an
    entry point) or a `package.module:Class` path."""
    if ":" in name:
        cls = REGISTRY.load(name, name)
    else:
        found = REGISTRY.get(name)
        if found is None:
            raise ConfigError(
                f"unknown paradigm {name!r}; choose one of: {', '.join(REGISTRY.names())}, "
                "or give a package.module:Class path"
            )
        cls = found
    try:
        return cls()
    except TypeError as error:  # an abstract method left out
        raise ConfigError(f"paradigm {name!r}: {error}") from None
