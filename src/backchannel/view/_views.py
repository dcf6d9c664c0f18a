"""The view of a run's paradigm: its `Paradigm.view` hook, found by the paradigm's name.

The viewer knows no paradigm: whatever a paradigm (built in or a plugin) declares there is
drawn by the one generic renderer; a paradigm without a view gets the generic timeline.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.paradigms import View


@cache
def view_of(paradigm: str) -> View | None:
    """The paradigm's view, or None (no view, or a paradigm this installation cannot load)."""
    from backchannel.paradigms import get_paradigm

    try:
        return get_paradigm(paradigm).view
    except ConfigError:
        return None
