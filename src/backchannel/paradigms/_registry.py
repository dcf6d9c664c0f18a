"""Paradigms by name: the built-in ones, `package.module:Class` paths, and third-party packages
that register under the entry-point group `backchannel.paradigms`. All are imported lazily."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

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


def registered() -> dict[str, str]:
    """Every paradigm name this installation knows: built-in ones and entry points."""
    found = dict(BUILT_IN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry.value)
    return found


def _load(target: str, label: str) -> type[Paradigm[Any]]:
    from backchannel.paradigms._base import Paradigm

    module_name, _, attribute = target.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except ImportError as error:
        raise ConfigError(
            f"paradigm {label!r}: cannot import {module_name!r} ({error}); install the package "
            "that provides it, or check the module path"
        ) from error
    except AttributeError:
        raise ConfigError(
            f"paradigm {label!r}: module {module_name!r} has no {attribute!r}; "
            "write it as package.module:ClassName"
        ) from None
    if not (isinstance(value, type) and issubclass(value, Paradigm)):
        raise ConfigError(f"paradigm {label!r}: {target} is not a subclass of backchannel.Paradigm")
    return value


def get_paradigm(name: str) -> Paradigm[Any]:
    """The paradigm of an experiment file's `paradigm:` field: a registered name (built-in or an
    entry point) or a `package.module:Class` path."""
    if ":" in name:
        target = name
    else:
        known = registered()
        found = known.get(name)
        if found is None:
            raise ConfigError(
                f"unknown paradigm {name!r}; choose one of: {', '.join(sorted(known))}, "
                "or give a package.module:Class path"
            )
        target = found
    cls = _load(target, name)
    try:
        return cls()
    except TypeError as error:  # an abstract method left out
        raise ConfigError(f"paradigm {name!r}: {error}") from None
