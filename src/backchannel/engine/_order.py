"""Speaking order: fixed, or reshuffled every round from the experiment seed.

A reshuffled order depends only on the experiment seed and the round, so every conversation of an
experiment uses the same sequence and a given seat speaks at the same positions across runs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal, TypeVar

from backchannel.seeding import derive_seed

OrderPolicy = Literal["fixed", "shuffled"]
T = TypeVar("T")


def speaking_order(
    seats: Sequence[T], round_number: int, policy: OrderPolicy, experiment_seed: int
) -> list[T]:
    """The order in which `seats` speak in round `round_number` (1-based)."""
    if policy == "fixed":
        return list(seats)
    if policy != "shuffled":
        raise ValueError(f"unknown speaking-order policy {policy!r}; use fixed or shuffled")
    order = list(seats)
    random.Random(derive_seed("speaking-order", experiment_seed, round_number, len(seats))).shuffle(
        order
    )
    return order
