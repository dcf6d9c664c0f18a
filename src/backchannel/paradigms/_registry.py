"""Paradigms by name, imported lazily."""

from __future__ import annotations

import importlib

from backchannel.errors import ConfigError
from backchannel.paradigms._base import Paradigm

PARADIGMS: dict[str, str] = {
    "discussion": "backchannel.paradigms.discussion:Discussion",
    "peer_pressure": "backchannel.paradigms.peer_pressure:PeerPressure",
    "dyad": "backchannel.paradigms.dyad:Dyad",
    "council": "backchannel.paradigms.council:Council",
}


def get_paradigm(name: str) -> Paradigm:
    target = PARADIGMS.get(name)
    if target is None:
        raise ConfigError(
            f"unknown paradigm {name!r}; choose one of: {', '.join(sorted(PARADIGMS))}"
        )
    module_name, _, attribute = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigError(
            f"paradigm {name!r} is not available in this installation: {error}"
        ) from error
    paradigm: Paradigm = cls()
    return paradigm
