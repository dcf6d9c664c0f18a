"""Who hears whom, checked on the wire: for every topology, each prompt the fake server receives
holds exactly the messages of the agents the speaker hears; mixed-model rooms send each agent's
calls to its own model; the graph is seeded by the conversation and survives a resume."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import yaml
from typer.testing import CliRunner, Result

from backchannel import orchestration
from backchannel.backends import EndpointSettings, build_client
from backchannel.engine import ConversationSpec, run_conversation
from backchannel.experiment import load_experiment
from backchannel.paradigms.peer_pressure import PeerPressure, PeerPressureSettings
from backchannel.store import RunStore
from backchannel.testing import FakeOpenAIServer

SPEAKER = re.compile(r"You are (\w+),")
TAG = re.compile(r"tag-(\w+)-r\d+")


def tagged(body: dict[str, Any]) -> str:
    """A turn names its speaker and a counter; a probe answers plainly."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    name = SPEAKER.search(system).group(1)  # type: ignore[union-attr]
    if "private question" in user:
        return "Paris"
    return f"tag-{name}-r{user.count('tag-')} says it is Paris."


def settings(**extra: Any) -> PeerPressureSettings:
    data: dict[str, Any] = {
        "model": "openai/fake-model",
        "datasets": [{"name": "counterfact", "limit": 1}],
        "n_agents": 8,
        "k": 1,
        "rounds": 2,
        "memory_rounds": 5,
        "order": "fixed",
        "judge": None,
        "reask": {"items": 0},
        **extra,
    }
    return PeerPressureSettings.model_validate(data)


async def converse(
    server: FakeOpenAIServer, config: PeerPressureSettings, seed: int = 11
) -> dict[str, Any]:
    paradigm = PeerPressure()
    item = paradigm.items(config, 0)[0]
    spec = ConversationSpec("c", "peer_pressure", {}, "", item, 0, seed)
    client = build_client(
        paradigm.models(config), endpoints=[EndpointSettings(base_url=server.base_url, api_key="k")]
    )
    try:
        outcome = await run_conversation(spec, 0, paradigm.run, config, client, 0)
    finally:
        await client.aclose()
    assert outcome.status == "done", outcome.error
    return outcome.context.meta


TOPOLOGIES = [
    {"topology": "complete"},
    {"topology": "ring"},
    {"topology": "star"},
    {"topology": "small_world", "graph": {"k": 4, "p": 0.5}},
    {"topology": "scale_free", "graph": {"m": 2}},
    {"topology": "hierarchy", "graph": {"team_size": 3}},
    {"topology": "edges", "graph": {"edges": [[0, 1], [1, 2], [2, 3], [5, 6]]}},
]


@pytest.mark.parametrize("extra", TOPOLOGIES, ids=lambda e: e["topology"])
async def test_every_prompt_holds_exactly_the_heard_agents_messages(extra: dict[str, Any]) -> None:
    async with FakeOpenAIServer(responder=tagged) as server:
        meta = await converse(server, settings(**extra))
        bodies = list(server.requests)
    names = [a["name"] for a in meta["agents"]]
    if extra["topology"] == "complete":
        assert "topology" not in meta
        heard = {a: set(names) - {a} for a in names}
    else:
        graph = nx.Graph(meta["topology"]["edges"])
        graph.add_nodes_from(names)
        heard = {a: set(graph.neighbors(a)) for a in names}
    checked = 0
    for body in bodies:
        speaker = SPEAKER.search(body["messages"][0]["content"]).group(1)  # type: ignore[union-attr]
        user = body["messages"][-1]["content"]
        seen = set(TAG.findall(user))
        # In round 2 every agent has spoken once, so a turn's view holds exactly the messages
        # of the agents it hears (its own appear as "You"); no prompt holds any other's.
        if "(round 2)" in user:
            assert seen - {speaker} == heard[speaker], (speaker, sorted(seen))
            checked += 1
        assert seen - {speaker} <= heard[speaker], (speaker, sorted(seen))
    assert checked == 8


def test_the_shipped_graphs_have_the_documented_shape() -> None:
    from backchannel.engine import TopologySpec, build_graph

    ring = build_graph(TopologySpec("ring"), 6, 0)
    assert sorted(d for _, d in ring.degree) == [2] * 6
    star = build_graph(TopologySpec("star"), 6, 0)
    assert star.degree[0] == 5 and all(star.degree[v] == 1 for v in range(1, 6))
    # teams of 3 talk among themselves: {0,1,2} {3,4,5} {6}; their leads 0, 3, 6 form the
    # team above.
    tree = build_graph(TopologySpec("hierarchy", team_size=3), 7, 0)
    edges = [(0, 1), (0, 2), (0, 3), (0, 6), (1, 2), (3, 4), (3, 5), (3, 6), (4, 5)]
    assert sorted(tree.edges) == edges
    a = build_graph(TopologySpec("small_world", k=4, p=0.5), 20, 9)
    b = build_graph(TopologySpec("small_world", k=4, p=0.5), 20, 9)
    assert sorted(a.edges) == sorted(b.edges)


def test_adversary_placement() -> None:
    from backchannel.engine import TopologySpec, build_graph, place_adversaries

    star = build_graph(TopologySpec("star"), 5, 0)
    assert place_adversaries(star, 1, "hub", 0) == [0]
    assert place_adversaries(star, 2, "periphery", 0) == [1, 2]
    assert place_adversaries(star, 2, "first", 0) == [0, 1]
    drawn = place_adversaries(star, 2, "random", 4)
    assert drawn == place_adversaries(star, 2, "random", 4) and len(set(drawn)) == 2


async def test_mixed_models_reach_the_model_of_each_agent() -> None:
    models = ("model-a", "model-b", "model-c")
    async with FakeOpenAIServer(responder=tagged, models=models) as server:
        pool = [f"openai/{m}" for m in models]
        meta = await converse(server, settings(models=pool, assignment="round_robin"))
        robin = list(server.requests)
        server.requests.clear()
        by_role = await converse(
            server,
            settings(
                assignment="by_role",
                honest_model="openai/model-a",
                adversary_model="openai/model-b",
                k=2,
            ),
        )
        roles = list(server.requests)
    names = [a["name"] for a in meta["agents"]]
    for body in robin:
        speaker = SPEAKER.search(body["messages"][0]["content"]).group(1)  # type: ignore[union-attr]
        assert body["model"] == models[names.index(speaker) % 3]
        assert meta["models"][speaker] == f"openai/{body['model']}"
    adversaries = set(by_role["adversaries"])
    assert len(adversaries) == 2
    for body in roles:
        speaker = SPEAKER.search(body["messages"][0]["content"]).group(1)  # type: ignore[union-attr]
        assert body["model"] == ("model-b" if speaker in adversaries else "model-a")


async def test_interventions_reach_the_prompts() -> None:
    async with FakeOpenAIServer(responder=tagged) as server:
        meta = await converse(server, settings(intervention="early_correction"))
        early = list(server.requests)
        server.requests.clear()
        checker = await converse(server, settings(intervention="designated_checker"))
        checked = list(server.requests)
        server.requests.clear()
        await converse(server, settings(intervention="untrusted_peers"))
        untrusted = list(server.requests)
    reminder = "Moderator: Moderator's reminder"
    # round-1 turns come before the reminder; round-2 turns and round >= 1 probes see it
    assert not any(reminder in b["messages"][-1]["content"] for b in early if "(round 1)" in str(b))
    assert all(reminder in b["messages"][-1]["content"] for b in early if "(round 2)" in str(b))
    assert meta["intervention"] == {
        "kind": "early_correction",
        "correction_round": 1,
        "checker": None,
    }
    name = checker["intervention"]["checker"]
    assert name == "Bob"  # the first honest agent; Alice is the adversary
    for body in checked:
        system = body["messages"][0]["content"]
        assert ("fact-checker" in system) == system.startswith(f"You are {name},")
    for body in untrusted:
        system = body["messages"][0]["content"]
        assert ("unverified input" in system) != ("Assert confidently" in system)


def invoke(*args: Any) -> Result:
    from backchannel.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def experiment(tmp_path: Path, **extra: Any) -> Path:
    data = {
        "name": "pp-graph",
        "paradigm": "peer_pressure",
        "seed": 3,
        "factors": {"model": ["sim"]},
        "settings": {
            "datasets": [{"name": "counterfact", "limit": 3}],
            "n_agents": 12,
            "k": 2,
            "rounds": 2,
            "judge": None,
            "reask": {"items": 0},
            "topology": "small_world",
            "graph": {"k": 4, "p": 0.3},
            "placement": "random",
            **extra,
        },
    }
    path = tmp_path / "pp.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def graphs(run: Path) -> dict[str, Any]:
    store = RunStore(run)
    try:
        rows = store.tables().conversations
    finally:
        store.close()
    found = {}
    for row in rows.itertuples():
        meta = row.meta if isinstance(row.meta, dict) else json.loads(row.meta)
        found[row.conversation_id] = (meta["topology"], meta["adversaries"])
    return found


def test_the_seeded_graph_is_the_same_across_resumes(tmp_path: Path) -> None:
    path = experiment(tmp_path)
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    assert invoke("run", path, "-o", whole).exit_code == 0
    assert invoke("run", path, "-o", resumed, "--limit", "1").exit_code == 0
    assert invoke("run", path, "-o", resumed).exit_code == 0
    first, second = graphs(whole), graphs(resumed)
    assert first == second and len(first) == 3
    # each conversation draws its own graph from its own seed
    assert len({json.dumps(g) for g in first.values()}) > 1


@pytest.mark.parametrize("n", [50, 100])
def test_large_groups_make_exactly_the_calls_the_dry_run_predicts(tmp_path: Path, n: int) -> None:
    path = experiment(tmp_path, n_agents=n, k_share=0.1, placement="hub")
    data = yaml.safe_load(path.read_text())
    del data["settings"]["k"]
    data["settings"]["datasets"][0]["limit"] = 1
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / "run"
    result = invoke("run", path, "-o", run)
    assert result.exit_code == 0, result.output
    estimate = orchestration.plan(load_experiment(path)).estimate(only_todo=False)
    store = RunStore(run)
    try:
        calls = store.usage().total().calls
        meta = store.tables().conversations.iloc[0].meta
    finally:
        store.close()
    meta = meta if isinstance(meta, dict) else json.loads(meta)
    k = n // 10
    # N turns per round for 2 rounds, and (N - k) honest agents probed before round 1 and after
    # each round.
    assert estimate["calls"] == calls == 2 * n + 3 * (n - k)
    assert len(meta["adversaries"]) == k and len(meta["agents"]) == n


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"n_agents": 4, "k": 1, "graph": {"k": 4}}, "small_world needs 2 <= k < N"),
        ({"roster": "no-such-roster.csv"}, "roster file no-such-roster.csv cannot be read"),
        ({"topology": "edges", "placement": "first"}, "topology edges needs graph.edges"),
        ({"assignment": "by_role"}, "by_role needs honest_model and adversary_model"),
    ],
)
def test_a_bad_group_is_one_line_and_exit_2(
    tmp_path: Path, extra: dict[str, Any], message: str
) -> None:
    run = tmp_path / "run"
    result = invoke("run", experiment(tmp_path, **extra), "-o", run)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not run.exists()
