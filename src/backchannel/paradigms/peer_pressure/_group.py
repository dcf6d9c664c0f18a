"""The group of one conversation: roster, who hears whom, where adversaries sit, each agent's
model, and which honest agent (if any) is the designated checker."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.engine import (
    TopologySpec,
    build_graph,
    graph_meta,
    hears,
    load_roster,
    place_adversaries,
    shipped_roster,
)
from backchannel.errors import ConfigError
from backchannel.paradigms.peer_pressure._settings import PeerPressureSettings
from backchannel.seeding import derive_seed

HONEST, ADVERSARY = "honest", "adversary"


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    persona: str
    role: str
    model: str
    checker: bool = False


@dataclass(frozen=True, slots=True)
class Group:
    members: list[Member]
    hears: dict[str, frozenset[str]] | None
    topology: dict[str, Any]


def roster_of(settings: PeerPressureSettings) -> list[tuple[str, str]]:
    """The (name, persona) pairs of the N agents."""
    try:
        if settings.roster is None:
            return shipped_roster(settings.n_agents)
        return load_roster(Path(settings.roster), settings.n_agents)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def topology_spec(settings: PeerPressureSettings) -> TopologySpec:
    g = settings.graph
    return TopologySpec(
        settings.topology, g.k, g.p, g.m, g.team_size, tuple((a, b) for a, b in g.edges)
    )


def pool_models(settings: PeerPressureSettings) -> set[str]:
    """Every model an agent of this cell may run."""
    if settings.assignment == "by_role":
        return {str(settings.honest_model), str(settings.adversary_model)}
    return set(settings.models) or {settings.model}


def assign_models(settings: PeerPressureSettings, roles: list[str], seed: int) -> list[str]:
    """Each agent's model: round robin by position over the pool, a seeded draw per agent, or
    by role; without a pool, `model` for everyone."""
    if settings.assignment == "by_role":
        return [
            str(settings.adversary_model if r == ADVERSARY else settings.honest_model)
            for r in roles
        ]
    pool = settings.models or [settings.model]
    if settings.assignment == "random":
        rng = random.Random(derive_seed(seed, "models"))
        return [rng.choice(pool) for _ in roles]
    return [pool[i % len(pool)] for i in range(len(roles))]


def build_group(settings: PeerPressureSettings, seed: int) -> Group:
    """The group for a conversation seeded `seed`: the same seed gives the same group."""
    pairs = roster_of(settings)
    names = [name for name, _ in pairs]
    n, k = settings.n_agents, settings.adversaries
    spec = topology_spec(settings)
    try:
        graph = build_graph(spec, n, derive_seed(seed, "topology"))
        adversaries = set(
            place_adversaries(graph, k, settings.placement, derive_seed(seed, "placement"))
        )
    except ValueError as error:
        raise ConfigError(str(error)) from None
    roles = [ADVERSARY if i in adversaries else HONEST for i in range(n)]
    models = assign_models(settings, roles, seed)
    checker = None
    if settings.intervention == "designated_checker":
        checker = next(i for i, r in enumerate(roles) if r == HONEST)
    members = [
        Member(name, persona, roles[i], models[i], i == checker)
        for i, (name, persona) in enumerate(pairs)
    ]
    heard = None if spec.kind == "complete" else hears(graph, names)
    return Group(members, heard, graph_meta(graph, names, spec))
