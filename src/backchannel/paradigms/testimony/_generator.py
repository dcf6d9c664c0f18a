"""New object-moving stories from parameters, under the same window rule and verifier.

A generated chain starts in a random container and makes `moves` moves, each to a container other
than the current one, each by a random role; the rule then assigns windows and messages. Chains
the verifier rejects are redrawn (the count is kept), so the same parameters and seed always give
the same environment.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from backchannel.paradigms.testimony._chain import Chain, Node
from backchannel.paradigms.testimony._environment import Deception, Environment, MessageKind
from backchannel.paradigms.testimony._rule import Rejected, build_environment
from backchannel.seeding import derive_seed

DEFAULT_ROLES = ("Avery", "Blake", "Casey", "Devon", "Emery")
DEFAULT_CONTAINERS = (
    "blue_box",
    "green_basket",
    "red_crate",
    "blue_cupboard",
    "green_drawer",
    "red_suitcase",
    "blue_bucket",
    "green_envelope",
)


@dataclass(frozen=True, slots=True)
class Generated:
    """A generated environment and how many drawn chains the verifier rejected first."""

    environment: Environment
    rejected: int


def draw_chain(
    rng: random.Random,
    moves: int,
    roles: tuple[str, ...],
    containers: tuple[str, ...],
    story_id: str,
    target: str,
) -> Chain:
    """One random chain: a start container, then `moves` moves by random roles."""
    nodes = [Node(rng.choice(containers))]
    for _ in range(moves):
        options = [c for c in containers if c != nodes[-1].container]
        nodes.append(Node(rng.choice(options), rng.choice(roles)))
    return Chain(story_id, target, tuple(nodes), roles)


def generate(
    *,
    moves: int,
    seed: int,
    deception: Deception,
    key_kind: MessageKind,
    roles: tuple[str, ...] = DEFAULT_ROLES,
    containers: tuple[str, ...] = DEFAULT_CONTAINERS,
    target: str = "ball",
    attempts: int = 1000,
) -> Generated:
    """The first chain (seeded draws) that the rule and verifier accept."""
    if moves < 3:
        raise ValueError(f"a story needs at least 3 moves, got {moves}")
    if len(roles) != 5 or len(set(roles)) != 5:
        raise ValueError(f"a story needs 5 distinct roles, got {list(roles)}")
    if len(set(containers)) < 2:
        raise ValueError("a story needs at least 2 distinct containers")
    if not target.isidentifier():
        raise ValueError(f"the object needs a one-word name, got {target!r}")
    story_id = f"gen-m{moves}-s{seed}"
    for attempt in range(attempts):
        rng = random.Random(derive_seed(seed, attempt))
        chain = draw_chain(rng, moves, roles, containers, story_id, target)
        try:
            env = build_environment(
                chain,
                tuple(containers),
                deception=deception,
                key_kind=key_kind,
                environment_id=f"{story_id}-{deception}",
                source="generated",
            )
        except Rejected:
            continue
        return Generated(env, attempt)
    raise ValueError(f"no chain of {moves} moves passed the verifier in {attempts} draws")
