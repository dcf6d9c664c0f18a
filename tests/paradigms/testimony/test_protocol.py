"""Full small runs on a scripted sim through the CLI: calls, visibility, simultaneity, exits,
observers, parse failures and config errors, checked on the prompts actually sent."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from backchannel.backends import LabelSet, Request, register_sim, scripted_answer, unregister_sim
from backchannel.cli import app
from backchannel.cli._common import load_tables

MODEL = "sim/testimony_script"
captured: list[Request] = []
unreadable: set[str] = set()
_ROUND = re.compile(r"Round (R\d)\.")


def agent_of(request: Request) -> str:
    match = re.match(r"You are (\w+)", request.messages[0].content)
    assert match, request.messages[0].content
    return match.group(1)


def phase_of(request: Request) -> str:
    """The round a statement request belongs to: Rk for participants, Ok for observers."""
    found = _ROUND.findall(request.messages[-1].content)
    label = found[-1]
    if "You are an observer and speak after" in request.messages[-1].content:
        return "O" + label[1:]
    return label


def respond(request: Request) -> str:
    captured.append(request)
    name = agent_of(request)
    if isinstance(request.constraint, LabelSet):
        return "no idea" if name in unreadable else scripted_answer(request)
    return f"<<{name} in {phase_of(request)}>> My account stands."


@pytest.fixture(autouse=True)
def scripted() -> Iterator[None]:
    captured.clear()
    unreadable.clear()
    register_sim("testimony_script", respond)
    yield
    unregister_sim("testimony_script")


def experiment(factors: dict[str, Any], **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "testimony-test",
        "paradigm": "testimony",
        "seed": 5,
        "factors": factors,
        "items_limit": 2,
        "settings": {"model": MODEL, "max_tokens": 64},
    }
    data.update(extra)
    return data


def run(tmp_path: Path, data: dict[str, Any], name: str = "run") -> tuple[Path, int]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "dry"), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    result = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / name)])
    assert result.exit_code == 0, result.output
    estimated = int(dry.output.split("estimated calls:")[1].split()[0].replace(",", ""))
    return tmp_path / name, estimated


ALL_CELLS = {
    "condition": ["C0", "C1"],
    "intervention": [
        "none",
        "honest_exit",
        "null_exit",
        "false_exit",
        "passive_observers",
        "active_observers",
    ],
}
EXCLUDE = [
    {"condition": "C1", "intervention": "honest_exit"},
    {"condition": "C1", "intervention": "null_exit"},
    {"condition": "C0", "intervention": "false_exit"},
]


def test_full_small_run_through_the_cli(tmp_path: Path) -> None:
    directory, estimated = run(tmp_path, experiment(ALL_CELLS, exclude=EXCLUDE))
    runner = CliRunner()
    status = runner.invoke(app, ["status", str(directory)])
    assert "18 done, 0 incomplete, 0 failed" in status.output, status.output
    # The estimate is exactly the calls asked: 2 stories x (C0 40 + C1 40 + 3 exits x 34
    # + 2 x passive 52 + 2 x active 61) = 2 x 408; the arms of a story share their common
    # calls, so the model answers the others only.
    assert estimated == 2 * (40 + 40 + 3 * 34 + 2 * 52 + 2 * 61)
    shared = shared_calls(directory)
    assert shared > 0 and len(captured) == estimated - shared
    assert f"calls {estimated}" in status.output
    assert f"calls shared by paired arms: {shared} " in status.output
    metrics = runner.invoke(app, ["metrics", str(directory), "--json"])
    assert metrics.exit_code == 0, metrics.output
    figures = json.loads(metrics.output)
    assert figures["conversations"] == 18 and figures["checkpoints"] == [
        "T0",
        "T1",
        "R1",
        "R2",
        "R3",
    ]
    arms = {(e["condition"], e["intervention"], e["group"]) for e in figures["outcome_rates"]}
    assert ("C1", "active_observers", "all") in arms and ("C0", "null_exit", "participants") in arms
    report = runner.invoke(app, ["report", str(directory)])
    assert report.exit_code == 0, report.output
    html = (directory / "report" / "report.html").read_text(encoding="utf-8")
    for heading in (
        "Outcomes by checkpoint",
        "C0 vs C1 by deception type",
        "Paired C0 - C1 differences",
        "Exits and observers",
        "Observer trajectory",
    ):
        assert heading in html
    exported = runner.invoke(
        app, ["export", str(directory), "-o", str(tmp_path / "tables"), "--format", "csv"]
    )
    assert exported.exit_code == 0, exported.output
    from_tables = runner.invoke(app, ["metrics", "--tables", str(tmp_path / "tables"), "--json"])
    assert from_tables.exit_code == 0, from_tables.output
    assert json.loads(from_tables.output) == figures  # the same figures from exported CSV
    conversations = pd.read_csv(tmp_path / "tables" / "conversations.csv")
    meta = json.loads(conversations["meta"].iloc[0])
    environment = meta["environment"]
    assert {
        "story_id",
        "roles",
        "chain",
        "windows",
        "observations",
        "key",
        "second_key",
        "messages",
    } <= set(environment)
    assert environment["condition"] == meta["condition"]


def shared_calls(directory: Path) -> int:
    """Calls of the run that another conversation's call answered."""
    metas = load_tables(directory, None).conversations["meta"]
    return sum(int(json.loads(m).get("shared_calls", 0)) for m in metas)


def counts_by_phase(tables: Any) -> dict[tuple[str, str, int], int]:
    events = tables.events
    return events.groupby(["kind", "role", "round"]).size().to_dict()


def test_estimate_matches_calls_for_each_intervention(tmp_path: Path) -> None:
    for intervention, per_story in [("none", 40), ("false_exit", 34), ("active_observers", 61)]:
        captured.clear()
        data = experiment({"condition": ["C1"], "intervention": [intervention]})
        directory, estimated = run(tmp_path, data, name=intervention)
        assert estimated == len(captured) == 2 * per_story
        events = load_tables(directory, None).events
        assert int((events["model"] != "").sum()) == len(captured)


def test_direct_messages_reach_only_sender_and_recipient(tmp_path: Path) -> None:
    directory, _ = run(
        tmp_path, experiment({"condition": ["C0", "C1"], "intervention": ["passive_observers"]})
    )
    events = load_tables(directory, None).events
    testimony = events[events["name"] == "testimony"]
    direct = testimony[testimony["meta"].map(lambda m: json.loads(m)["kind"] == "direct")]
    assert len(direct) == 2 * 2 * 2  # two per conversation
    assert set(direct["channel"]) == {"direct"}
    for row in direct.to_dict(orient="records"):
        (recipient,) = json.loads(row["meta"])["recipients"]
        shown = f"(private message to {recipient}) {row['text']}"
        viewers = {agent_of(r) for r in captured if shown in r.messages[-1].content}
        assert viewers == {row["agent"], recipient}
    broadcasts = testimony[testimony["meta"].map(lambda m: json.loads(m)["kind"] == "broadcast")]
    assert set(broadcasts["channel"]) == {"public"}
    for row in broadcasts.to_dict(orient="records"):
        viewers = {agent_of(r) for r in captured if row["text"] in r.messages[-1].content}
        assert len(viewers) == 5 + 3  # every story role and the passive observers


def test_t0_sees_only_the_own_window_and_the_key_lies_only_in_c1(tmp_path: Path) -> None:
    data = experiment({"condition": ["C0", "C1"], "intervention": ["none"]})
    data["items_limit"] = 1  # one story: its C0 and its C1 conversation
    directory, _ = run(tmp_path, data)
    metas = {
        m["condition"]: m
        for m in (json.loads(t) for t in load_tables(directory, None).conversations["meta"])
    }
    texts = {m["text"] for meta in metas.values() for m in meta["environment"]["messages"]}
    t0 = [r for r in captured if "Conversation so far" not in r.messages[-1].content]
    # The T0 votes see no testimony yet. C0 and C1 share the four T0 votes of the roles whose
    # prompt is the same in both (all but the key, told to lie in C1): 5 + 1 calls.
    assert len(t0) == 5 + 1
    assert not any(t in r.messages[-1].content for r in t0 for t in texts)
    key = metas["C1"]["key"]
    false_text = next(
        m["text"] for m in metas["C1"]["environment"]["messages"] if m["sender"] == key
    )
    key_systems = {r.messages[0].content for r in captured if agent_of(r) == key}
    assert len(key_systems) == 2  # the honest one (C0) and the deceptive one (C1)
    (deceptive,) = [s for s in key_systems if "Your hidden goal" in s]
    assert false_text in deceptive and metas["C1"]["endpoint"] in deceptive
    others = [r for r in captured if agent_of(r) != key]
    assert not any("Your hidden goal" in r.messages[0].content for r in others)


def test_stored_transcripts_follow_the_seeded_order_in_every_arm(tmp_path: Path) -> None:
    from backchannel.paradigms.testimony._shuffle import story_order

    data = experiment({"condition": ["C0", "C1"], "intervention": ["none", "passive_observers"]})
    directory, _ = run(tmp_path, data)
    tables = load_tables(directory, None)
    events = tables.events
    seen: dict[str, tuple[list[str], list[str]]] = {}
    for record in tables.conversations.to_dict(orient="records"):
        meta = json.loads(record["meta"])
        environment = meta["environment"]
        order = story_order(environment["roles"], 5, environment["id"], "roles")
        options = story_order(environment["containers"], 5, environment["id"], "options")
        assert (meta["order"], meta["options"]) == (order, options)
        # The same lists in every arm of the story: C0, C1 and the observer arm.
        assert seen.setdefault(record["item_id"], (order, options)) == (order, options)
        mine = events[events["conversation_id"] == record["conversation_id"]].sort_values("seq")
        testimony = mine[mine["name"] == "testimony"]
        assert list(testimony["agent"]) == order
        for number in (2, 4, 6):
            said = mine[(mine["name"] == "statement") & (mine["round"] == number)]
            assert list(said.sort_values("turn")["agent"]) == order
        assert [a["name"] for a in meta["agents"] if a["role"] != "observer"] == order
    assert len(seen) == 2
    # The vote options of every vote, and the preamble, list the containers in that order.
    for request in captured:
        if isinstance(request.constraint, LabelSet):
            labels = list(request.constraint.labels)
            assert labels[-1] == "UNKNOWN"
            assert any(labels[:-1] == options for _, options in seen.values())


def test_statements_of_a_round_are_simultaneous(tmp_path: Path) -> None:
    run(tmp_path, experiment({"condition": ["C1"], "intervention": ["active_observers"]}))
    statements = [r for r in captured if not isinstance(r.constraint, LabelSet)]
    assert len(statements) == 2 * (3 * 5 + 3 * 3)
    for request in statements:
        name, phase = agent_of(request), phase_of(request)
        prompt = request.messages[-1].content
        seen = set(re.findall(r"<<(\w+) in ([RO]\d)>>", prompt))
        assert not any(p == phase and n != name for n, p in seen), (name, phase, seen)
        k = int(phase[1])
        if phase.startswith("O"):
            # Observers read the participants' statements of the round they follow.
            assert sum(p == f"R{k}" for _, p in seen) == 5
        elif k > 1:
            # Participants read the observers' statements of the round before.
            assert sum(p == f"O{k - 1}" for _, p in seen) == 3


def test_exits_and_passive_observers(tmp_path: Path) -> None:
    data = experiment({"condition": ["C0"], "intervention": ["null_exit", "passive_observers"]})
    directory, _ = run(tmp_path, data)
    tables = load_tables(directory, None)
    events = tables.events
    for record in tables.conversations.to_dict(orient="records"):
        meta = json.loads(record["meta"])
        mine = events[events["conversation_id"] == record["conversation_id"]]
        key_events = mine[mine["agent"] == meta["key"]]
        if meta["intervention"] == "null_exit":
            assert set(key_events[key_events["kind"] == "probe"]["round"]) == {0, 1}
            assert not (
                (key_events["kind"] == "message") & (key_events["name"] == "statement")
            ).any()
            (sent,) = key_events[key_events["name"] == "testimony"]["text"]
            assert sent.startswith("[No testimony")
        else:
            observers = mine[mine["role"] == "observer"]
            # Observers vote at T1 and after every round, from the public record so far.
            assert set(observers["kind"]) == {"probe"} and set(observers["round"]) == {1, 2, 4, 6}
            assert len(observers) == 3 * 4


def test_unreadable_votes_are_parse_failures(tmp_path: Path) -> None:
    from backchannel.paradigms.testimony import load_environments

    first = load_environments()[0]
    member = next(r for r in first.roles if r not in (first.key, first.second_key))
    unreadable.add(member)
    data = experiment({"condition": ["C0"], "intervention": ["none"]}, max_reasks=0)
    data["items_limit"] = 1
    directory, _ = run(tmp_path, data)
    events = load_tables(directory, None).events
    votes = events[(events["name"] == "vote") & (events["agent"] == member)]
    assert len(votes) == 5 and set(votes["status"]) == {"parse_failure"}
    result = CliRunner().invoke(app, ["metrics", str(directory), "--json"])
    assert json.loads(result.output)["failed_votes"] == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"factors": {"rounds": [["x"]]}}, "rounds does not vary by cell"),
        ({"factors": {"speakers": [4]}}, "does not read a factor of this name"),
        (
            {"factors": {"condition": ["C1"], "intervention": ["honest_exit"]}},
            "runs in condition C0",
        ),
        ({"factors": {"condition": ["C2"]}}, "factors.condition: level 'C2' is not allowed"),
        ({"settings": {"model": MODEL, "environments_file": "/nonexistent.json"}}, "no such file"),
    ],
)
def test_bad_designs_are_config_errors(tmp_path: Path, change: dict, message: str) -> None:
    data = experiment({"condition": ["C0"]})
    data.update(change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "bad"), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_an_environment_file_that_fails_the_verifier_is_refused(tmp_path: Path) -> None:
    from backchannel.paradigms.testimony import load_environments

    env = load_environments()[0].as_dict()
    env["windows"][env["roles"][0]] = [[0, len(env["chain"]) - 1]]
    path = tmp_path / "envs.json"
    path.write_text(json.dumps({"environments": [env]}), encoding="utf-8")
    data = experiment({"condition": ["C0"]})
    data["settings"]["environments_file"] = str(path)
    experiment_path = tmp_path / "exp.yaml"
    experiment_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["run", str(experiment_path), "-o", str(tmp_path / "r"), "--dry-run"]
    )
    assert result.exit_code == 2 and "fails the verifier" in result.output, result.output


def test_generated_environments_run(tmp_path: Path) -> None:
    data = experiment({"condition": ["C0", "C1"]})
    data["settings"]["generate"] = {"count": 3, "moves": [3, 6], "seed": 9}
    directory, estimated = run(tmp_path, data)
    assert estimated == len(captured) + shared_calls(directory) == 2 * 2 * 40
    ids = set(load_tables(directory, None).conversations["item_id"])
    assert ids == {"gen-m3-s9-event", "gen-m6-s10-coverage"}


def test_a_model_pool_per_role_is_counted_per_model(tmp_path: Path) -> None:
    register_sim("testimony_key", respond)
    register_sim("testimony_observer", respond)
    try:
        data = experiment({"condition": ["C1"], "intervention": ["active_observers"]})
        data["items_limit"] = 1
        data["settings"].update(
            key_model="sim/testimony_key", observer_model="sim/testimony_observer"
        )
        path = tmp_path / "pool.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        dry = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "d"), "--dry-run"])
        assert dry.exit_code == 0, dry.output
        run(tmp_path, data, name="pool")
        made: dict[str, int] = {}
        for request in captured:
            made[request.model] = made.get(request.model, 0) + 1
        # The key: 2 votes + 3 statements + 3 votes; observers: 3 x (3 statements + 4 votes).
        assert made == {"sim/testimony_key": 8, "sim/testimony_observer": 21, MODEL: 32}
        for model, count in made.items():
            assert f"{model}: {count}" in dry.output
    finally:
        unregister_sim("testimony_key")
        unregister_sim("testimony_observer")
