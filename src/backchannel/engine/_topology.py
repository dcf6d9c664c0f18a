"""Who hears whom in a room: a graph over the agents, built with networkx from a seed.

An undirected edge means the two agents hear each other; everyone always hears the moderator
and themselves. `complete` is a room where everyone hears everyone.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx

TopologyKind = Literal[
    "complete", "ring", "star", "small_world", "scale_free", "hierarchy", "edges"
]
TOPOLOGIES: tuple[str, ...] = (
    "complete",
    "ring",
    "star",
    "small_world",
    "scale_free",
    "hierarchy",
    "edges",
)
Placement = Literal["first", "hub", "periphery", "random"]
PLACEMENTS: tuple[str, ...] = ("first", "hub", "periphery", "random")


@dataclass(frozen=True, slots=True)
class TopologySpec:
    """A topology's kind and parameters: `k`, `p` (small_world), `m` (scale_free),
    `team_size` (hierarchy), `edges` (pairs of agent positions, 0-based, for `edges`)."""

    kind: str = "complete"
    k: int = 4
    p: float = 0.1
    m: int = 2
    team_size: int = 4
    edges: tuple[tuple[int, int], ...] = ()


def build_graph(spec: TopologySpec, n: int, seed: int) -> nx.Graph:
    """The graph over positions 0..n-1; random kinds draw from `seed` alone."""
    if n < 1:
        raise ValueError("a topology needs at least one agent")
    kind = spec.kind
    if kind == "complete":
        graph = nx.complete_graph(n)
    elif kind == "ring":
        graph = nx.cycle_graph(n) if n > 2 else nx.path_graph(n)
    elif kind == "star":
        graph = nx.star_graph(n - 1)
    elif kind == "small_world":
        if not 2 <= spec.k < n:
            raise ValueError(f"small_world needs 2 <= k < N; k = {spec.k}, N = {n}")
        graph = nx.connected_watts_strogatz_graph(n, spec.k, spec.p, seed=seed)
    elif kind == "scale_free":
        if not 1 <= spec.m < n:
            raise ValueError(f"scale_free needs 1 <= m < N; m = {spec.m}, N = {n}")
        graph = nx.barabasi_albert_graph(n, spec.m, seed=seed)
    elif kind == "hierarchy":
        graph = _hierarchy(n, spec.team_size)
    elif kind == "edges":
        graph = nx.empty_graph(n)
        for a, b in spec.edges:
            if not (0 <= a < n and 0 <= b < n) or a == b:
                raise ValueError(f"edge ({a}, {b}) is not a pair of distinct positions 0..{n - 1}")
            graph.add_edge(a, b)
    else:
        raise ValueError(f"unknown topology {kind!r}; use one of {', '.join(TOPOLOGIES)}")
    return graph


def _hierarchy(n: int, team_size: int) -> nx.Graph:
    """Teams of `team_size` (a lead and its members) talk within the team; the leads form a
    team under the first lead, recursively, so the whole is a tree of teams."""
    if team_size < 2:
        raise ValueError("hierarchy needs team_size >= 2")
    graph = nx.empty_graph(n)
    level = list(range(n))
    while len(level) > 1:
        leads = []
        for start in range(0, len(level), team_size):
            team = level[start : start + team_size]
            leads.append(team[0])
            for i, a in enumerate(team):
                for b in team[i + 1 :]:
                    graph.add_edge(a, b)
        level = leads
    return graph


def place_adversaries(graph: nx.Graph, k: int, placement: str, seed: int) -> list[int]:
    """Positions of the k adversaries: the first k, the k of highest degree, of lowest degree,
    or k drawn with `seed`; degree ties go to the lower position."""
    nodes = sorted(graph.nodes)
    if not 0 <= k <= len(nodes):
        raise ValueError(f"k = {k} adversaries do not fit in {len(nodes)} agents")
    if placement == "first":
        chosen = nodes[:k]
    elif placement == "hub":
        chosen = sorted(nodes, key=lambda v: (-graph.degree[v], v))[:k]
    elif placement == "periphery":
        chosen = sorted(nodes, key=lambda v: (graph.degree[v], v))[:k]
    elif placement == "random":
        chosen = random.Random(seed).sample(nodes, k)
    else:
        raise ValueError(f"unknown placement {placement!r}; use one of {', '.join(PLACEMENTS)}")
    return sorted(chosen)


def hears(graph: nx.Graph, names: Sequence[str]) -> dict[str, frozenset[str]]:
    """For each agent, the names of the agents it hears (its neighbours)."""
    return {names[v]: frozenset(names[u] for u in graph.neighbors(v)) for v in sorted(graph.nodes)}


def graph_meta(graph: nx.Graph, names: Sequence[str], spec: TopologySpec) -> dict[str, Any]:
    """What is stored with the conversation: the kind and the edges by agent name."""
    edges = sorted(tuple(sorted((names[a], names[b]))) for a, b in graph.edges)
    return {"kind": spec.kind, "edges": [list(e) for e in edges]}


def distances(
    edges: Sequence[Sequence[str]], names: Sequence[str], sources: Sequence[str]
) -> dict[str, int | None]:
    """Each agent's hop distance to the nearest of `sources` (None: unreachable)."""
    graph = nx.Graph()
    graph.add_nodes_from(names)
    graph.add_edges_from((a, b) for a, b in edges)
    if not sources:
        return {name: None for name in names}
    found: Mapping[str, int] = nx.multi_source_dijkstra_path_length(graph, set(sources))
    return {name: found.get(name) for name in names}
