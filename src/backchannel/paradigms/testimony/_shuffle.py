"""No time cue: the orders in which agents read roles, accounts, statements and vote options.

A Hi-ToM roster lists people in the order they act, so reading "first message = start of the
story" would recover the chain. Every list an agent reads is instead in a seeded order per story
(the experiment seed and the environment id), the same in every condition and intervention of
that story, so the arms of a pair read the same lists.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from backchannel.seeding import derive_seed

T = TypeVar("T")


def story_order(items: Sequence[T], seed: int, environment_id: str, what: str) -> list[T]:
    """`items` in the seeded order of this story; `what` names the list (roles, options)."""
    shuffled = list(items)
    random.Random(derive_seed(seed, "testimony", environment_id, what)).shuffle(shuffled)
    return shuffled
