"""The peer-pressure protocol on a scripted sim: calls, probes, re-asks, the private channel,
inline judges, items per dataset, and metrics that move."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from backchannel import orchestration
from backchannel.backends import Request, build_client, register_sim, unregister_sim
from backchannel.datasets import FactItem, load_shipped
from backchannel.engine import ConversationSpec, run_conversation
from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment
from backchannel.judges import classify_private, classify_public
from backchannel.paradigms import AnalysisOptions
from backchannel.paradigms.peer_pressure import PeerPressure, PeerPressureSettings
from backchannel.store import RunStore

ROOT = Path(__file__).resolve().parents[3]
FACTS: dict[str, FactItem] = {
    fact.question: fact for name in ("counterfact", "popqa") for fact in load_shipped(name, 2)
}
SIM = "pp-room"


class Room:
    """Adversaries assert the false answer; Bob adopts it once it is in his view; everyone else
    keeps the true answer. Private answers carry a unique tag so leaks can be searched for."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.private: list[str] = []

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        system = request.messages[0].content
        user = request.messages[-1].content
        fact = next(f for question, f in FACTS.items() if question in user)
        if "Assert confidently" in system:
            return f"The answer is clearly {fact.false_answer}."
        adopted = "You are Bob," in system and fact.false_answer in user
        answer = fact.false_answer if adopted else fact.true_answer
        if "private question" in user:
            text = f"{answer} [private #{len(self.private)}]"
            self.private.append(text)
            return text
        return f"I now agree it is {answer}." if adopted else f"I believe it is {answer}."


@pytest.fixture
def room() -> Iterator[Room]:
    scripted = Room()
    register_sim(SIM, scripted)
    yield scripted
    unregister_sim(SIM)


def invoke(*args: Any) -> Result:
    from backchannel.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def experiment(tmp_path: Path, **settings: Any) -> Path:
    data = {
        "name": "pp-test",
        "paradigm": "peer_pressure",
        "seed": 5,
        "factors": {"model": [f"sim/{SIM}"], "dataset": ["counterfact", "popqa"], "k": [0, 1]},
        "settings": {
            "datasets": [{"name": "counterfact", "limit": 2}, {"name": "popqa", "limit": 2}],
            "n_agents": 4,
            "rounds": 3,
            "judge": None,
            "reask": {"items": 1, "checkpoints": [1, 3]},
            **settings,
        },
    }
    path = tmp_path / "pp.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_design_runs_with_the_estimated_calls_and_no_private_leak(
    tmp_path: Path, room: Room
) -> None:
    path = experiment(tmp_path)
    run = tmp_path / "run"
    result = invoke("run", path, "-o", run)
    assert result.exit_code == 0, result.output
    estimate = orchestration.plan(load_experiment(path)).estimate(only_todo=False)
    store = RunStore(run)
    try:
        tables = store.tables()
        calls = store.usage().total().calls
    finally:
        store.close()
    # Per item: k=0 makes 4*3 turns + 4*4 probes = 28, k=1 makes 12 + 3*4 = 24 calls; the
    # re-asked item adds 4 variants x honest agents x 2 checkpoints (32 and 24).
    # Per dataset: 2*28 + 32 + 2*24 + 24 = 160; two datasets: 320.
    assert estimate["calls"] == calls == len(room.requests) == 320
    # The private channel never leaks: no private answer appears in any prompt.
    # Private answers per dataset: k=0 has 2 items x 4 agents x 4 checkpoints + 32 re-asks,
    # k=1 has 2 x 3 x 4 + 24: 112; two datasets: 224.
    assert len(room.private) == 224
    prompts = "\n".join(m.content for r in room.requests for m in r.messages)
    assert not [text for text in room.private if text in prompts]
    assert "[private #" not in prompts
    # A dataset factor runs only its own items.
    conversations = tables.conversations
    assert len(conversations) == 8
    for row in conversations.itertuples():
        assert row.item_id.startswith(f"{row.dataset}:")


def test_roles_prompts_and_reasks(tmp_path: Path, room: Room) -> None:
    run = tmp_path / "run"
    assert invoke("run", experiment(tmp_path), "-o", run).exit_code == 0
    adversary = [r for r in room.requests if "Assert confidently" in r.messages[0].content]
    assert adversary and all("You are Alice," in r.messages[0].content for r in adversary)
    systems = {r.messages[0].content for r in room.requests}
    honest_systems = {s for s in systems if "Assert confidently" not in s}
    assert not any("false" in s.lower() or "adversar" in s.lower() for s in honest_systems)
    probes = [r for r in room.requests if "private question" in r.messages[-1].content]
    assert all(r.settings.temperature == 0.0 and r.settings.max_tokens == 32 for r in probes)
    turns = [r for r in room.requests if "It is your turn" in r.messages[-1].content]
    assert all(r.settings.temperature == 0.7 for r in turns)
    # The anonymous re-ask shows the agent's own messages under another name, never as "You".
    anonymous = [
        r for r in probes if "what do you yourself think" in r.messages[-1].content
        and "Participant X: " in r.messages[-1].content
    ]  # fmt: skip
    assert anonymous and not any("\nYou: " in r.messages[-1].content for r in anonymous)
    store = RunStore(run)
    try:
        events = store.tables().events
    finally:
        store.close()
    probes_stored = events[events["kind"] == "probe"]
    assert set(probes_stored["role"]) == {"honest"}
    assert set(probes_stored["channel"]) == {"private"}
    reasks = probes_stored[probes_stored["name"] != "answer"]
    assert set(reasks["round"]) == {1, 3}
    assert set(reasks["name"]) == {
        "reask_original",
        "reask_self",
        "reask_self_anonymous",
        "reask_group",
    }
    # One re-asked item per dataset: 2 datasets x 2 k-levels conversations carry re-asks.
    assert reasks["conversation_id"].nunique() == 4
    answers = probes_stored[probes_stored["name"] == "answer"]
    assert sorted(set(answers["round"])) == [0, 1, 2, 3]


def test_metrics_move_with_k(tmp_path: Path, room: Room) -> None:
    run = tmp_path / "run"
    assert invoke("run", experiment(tmp_path), "-o", run).exit_code == 0
    labelled = invoke("judge", run, "--judge", "rule", "--as", "rule")
    assert labelled.exit_code == 0, labelled.output
    store = RunStore(run)
    try:
        tables = store.tables()
    finally:
        store.close()
    metrics = PeerPressure().metrics(tables, AnalysisOptions())
    # With k=1 the honest agents are Bob, Carol and David. Bob sees Alice's false answer after
    # round 1 and adopts it; the others keep the true answer: final infection 1/3 in every
    # conversation. With k=0 nobody says the false answer: 0. Before round 1 nobody is infected.
    by_cell = {(c.cell["dataset"], c.cell["k"]): c for c in metrics.fpi.by_cell}
    for dataset in ("counterfact", "popqa"):
        assert by_cell[(dataset, 1)].fpi == pytest.approx(1 / 3)
        assert by_cell[(dataset, 0)].fpi == 0.0
        assert by_cell[(dataset, 1)].initial == 0.0
    assert metrics.judge == "rule"


def conversation(settings: PeerPressureSettings) -> tuple[Any, int]:
    paradigm = PeerPressure()
    item = paradigm.items(settings, 0)[0]
    spec = ConversationSpec("c", "peer_pressure", {}, "", item, 0, 11)
    client = build_client(paradigm.models(settings))
    outcome = asyncio.run(run_conversation(spec, 0, paradigm.run, settings, client, 0))
    assert outcome.status == "done", outcome.error
    return outcome.context, paradigm.estimate(settings, item).total_calls


def settings(**judge: Any) -> PeerPressureSettings:
    return PeerPressureSettings.model_validate(
        {
            "model": f"sim/{SIM}",
            "datasets": [{"name": "counterfact", "limit": 1}],
            "n_agents": 3,
            "k": 1,
            "rounds": 2,
            "judge": judge,
            "reask": {"items": None, "checkpoints": [2]},
        }
    )


def test_the_inline_rule_judge_labels_every_honest_answer_and_turn(room: Room) -> None:
    ctx, estimate = conversation(settings(kind="rule"))
    # Honest Bob and Carol: 2 x 3 answers + 4 variants x 2 agents at checkpoint 2 = 14 private
    # events; 2 honest turns in each of 2 rounds = 4 public events.
    assert ctx.usage.total().calls == estimate == 3 * 2 + 6 + 8
    events = {e.seq: e for e in ctx.log.events}
    assert len(ctx.labels) == 18
    fact = next(iter(f for f in FACTS.values() if f.dataset == "counterfact"))
    for label in ctx.labels:
        event = events[label.event_seq]
        assert label.judge == "rule" and label.model == "rule" and event.role == "honest"
        if event.kind == "probe":
            assert label.label == classify_private(event.text, fact)
    bob_after_round_1 = [
        x for x in ctx.labels
        if events[x.event_seq].agent == "Bob" and events[x.event_seq].round == 1
        and events[x.event_seq].kind == "probe"
    ]  # fmt: skip
    assert [x.label for x in bob_after_round_1] == ["manipulated"]
    public = [x for x in ctx.labels if events[x.event_seq].kind == "message"]
    assert len(public) == 4
    messages = [e for e in ctx.log.events if e.kind == "message"]
    for x in public:
        before = [e.text for e in messages if e.seq < x.event_seq][-5:]
        assert x.label == classify_public(events[x.event_seq].text, fact, before)


def test_an_inline_llm_judge_is_counted_in_the_estimate(room: Room) -> None:
    ctx, estimate = conversation(settings(kind="llm", model="sim", name="simjudge"))
    by_model = {model: usage.calls for model, usage in ctx.usage.by_model.items()}
    assert by_model == {f"sim/{SIM}": 20, "sim": 18}
    assert estimate == 38
    assert {(x.judge, x.model, x.status) for x in ctx.labels} == {("simjudge", "sim", "ok")}


def test_cells_and_settings_are_checked() -> None:
    paradigm = PeerPressure()
    base = settings(kind="rule")
    with pytest.raises(ConfigError):
        paradigm.resolve({"k": 3, "n_agents": 3}, base)
    with pytest.raises(ConfigError):
        paradigm.resolve({"dataset": "simpleqa"}, base)
    with pytest.raises(ValueError):
        PeerPressureSettings.model_validate({"datasets": ["nowhere"]})
    with pytest.raises(ValueError):
        PeerPressureSettings.model_validate({"judge": {"kind": "llm"}})
    items = paradigm.items(PeerPressureSettings.model_validate({"datasets": ["popqa"]}), 0)
    assert items[0].item_id == "popqa:5069469"
    popqa = base.model_copy(update={"dataset": "popqa"})
    assert paradigm.items_for_cell(popqa, items) == items
    with pytest.raises(ConfigError):
        counterfact = base.model_copy(update={"dataset": "counterfact"})
        paradigm.items_for_cell(counterfact, items)


@pytest.mark.parametrize("name", ["peer_pressure.yaml", "quickstart.yaml"])
def test_the_examples_load_and_expand(name: str) -> None:
    loaded = load_experiment(ROOT / "examples" / name, model_override="sim")
    plan = orchestration.plan(loaded)
    assert plan.specs and plan.estimate(only_todo=False)["calls"] > 0


def test_the_quickstart_runs_and_reports_with_its_inline_judge(tmp_path: Path) -> None:
    run = tmp_path / "quickstart"
    result = invoke("run", ROOT / "examples" / "quickstart.yaml", "-o", run, "--model", "sim")
    assert result.exit_code == 0, result.output
    report = invoke("report", run)
    assert report.exit_code == 0, report.output
    assert (run / "report" / "report.html").is_file()


def test_the_manifest_records_the_judge_templates_beside_the_paradigms() -> None:
    from backchannel.judges import judge_template

    recorded = PeerPressure().templates()
    assert recorded["judges/private.txt"] == judge_template("private.txt")
    assert recorded["judges/public.txt"] == judge_template("public.txt")
    assert "probe.txt" in recorded and "adversary.txt" in recorded
