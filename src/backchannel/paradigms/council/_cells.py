"""How the council's groups come from the run's design: a group is one scenario, Delphi variant
and level of every other declared factor, split by state (the `pool` level, and C from B)."""

from __future__ import annotations

from typing import Any

from backchannel.analysis import Design

POOL = "pool"
"""The factor whose levels are the states A and B (C re-tallies B's conversations)."""
DELPHI = "delphi"


def cell_factors(design: Design) -> list[str]:
    """The declared factors a group has besides its scenario, Delphi variant and state."""
    return [f for f in design.factors if f not in (DELPHI, POOL)]


def shown(value: Any) -> Any:
    """A factor level as a table cell or label: lists and mappings as their JSON text."""
    import json

    return json.dumps(value, sort_keys=True) if isinstance(value, list | dict) else value
