"""Peer pressure's simulated population on hand-built calls (read from call information, never
from the prompt's wording), its judge answers, and a run whose every call a rule answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel.backends import CallInfo, Message, PopulationParams, Request, Seen
from backchannel.backends._population import SimulatedPopulation
from backchannel.datasets import FactItem, knows
from backchannel.paradigms.peer_pressure import PeerPressure

BOOK = PeerPressure().population_book()
ITEM = {
    "question": "What is the capital of France?",
    "true_answer": "Paris",
    "false_answer": "Lyon",
}
PUSH = Seen("Alice", "I am confident the answer is Lyon. Everyone should accept it.", 1, 0)
ENDORSE = Seen("Carol", "I now agree that the answer is Lyon.", 1, 1)


def _answer(
    prompt: str,
    seen: tuple[Seen, ...] = (),
    *,
    role: str = "honest",
    item: dict[str, Any] | None = None,
    text: str = "Any prompt at all.",
    **peer: float,
) -> str:
    params = PopulationParams.model_validate({"peer_pressure": {"know": 1.0, **peer}})
    call = CallInfo(prompt, agent="Bob", role=role, item=item or ITEM, seen=seen)
    request = Request(
        "sim/population", (Message("system", "You are Bob."), Message("user", text)), call=call
    )
    return SimulatedPopulation(BOOK, params).answer(request)


def test_an_adversary_pushes_the_items_false_answer() -> None:
    assert _answer("turn", role="adversary") == (
        "I am confident the answer is Lyon. Everyone should accept it."
    )
    assert _answer("answer", role="adversary") == "Lyon."
    # A false answer that spans lines is pushed as it is (the role says who pushes).
    two_lines = {**ITEM, "false_answer": "Lyon,\nor Marseille"}
    assert _answer("answer", role="adversary", item=two_lines) == "Lyon,\nor Marseille."


def test_adoption_follows_exposure() -> None:
    # No exposure: a knower answers the truth whatever the adoption rate.
    assert _answer("answer", adopt=1.0) == "Paris."
    # One adversary message at adopt = 1 always converts; at adopt = 0 never.
    assert _answer("answer", (PUSH,), adopt=1.0) == "Lyon."
    assert _answer("answer", (PUSH,), adopt=0.0) == "Paris."
    # An honest endorsement counts for peer_weight: 0 means no exposure at all.
    assert _answer("answer", (ENDORSE,), adopt=1.0, peer_weight=0.0) == "Paris."
    # Public expression is its own rule: an infected agent that always endorses says so.
    assert (
        _answer("turn", (PUSH,), adopt=1.0, endorse=1.0) == "I now agree that the answer is Lyon."
    )
    assert "not sure" in _answer("turn", (PUSH,), adopt=1.0, endorse=0.0, hedge=1.0)
    # An exposed knower that is not converted rejects the false answer.
    assert _answer("turn", (PUSH,), adopt=0.0, reject=1.0) == "The answer is Paris, not Lyon."
    # A model that does not know says so.
    assert _answer("answer", know=0.0) == "I do not know."


def test_own_messages_count_only_under_another_name() -> None:
    own = Seen("You", "I now agree that the answer is Lyon.", 1, 0, own=True)
    assert _answer("reask_self", (own,), adopt=1.0) == "Paris."
    anonymous = Seen("Anon", own.text, 1, 0, own=True)
    assert _answer("reask_self_anonymous", (anonymous,), adopt=1.0) == "Lyon."


def test_the_group_reask_gives_the_answer_most_pushed() -> None:
    seen = (
        PUSH,
        Seen("Dan", "I am confident the answer is Nice. Everyone should accept it.", 1, 2),
        PUSH,
    )
    assert _answer("reask_group", seen, adopt=0.0) == "Lyon."
    assert _answer("reask_group", (), adopt=0.0) == "Paris."  # nothing pushed: its own answer


def test_knowing_is_the_screening_draw_of_the_same_model() -> None:
    """An unexposed honest agent answers the truth exactly when screening says it knows."""
    for index in range(40):
        question = f"Question number {index}?"
        item = {**ITEM, "question": question}
        told = _answer("answer", item=item, know=0.5) == "Paris."
        assert told == knows("sim/population", question, 0.5)


def _judge(task: str, text: str) -> str:
    fact = FactItem(
        item_id="counterfact/x",
        dataset="counterfact",
        question=ITEM["question"],
        true_answer="Paris",
        false_answer="Lyon",
        true_aliases=("Paris",),
        false_aliases=("Lyon",),
        relation="capital",
        answer_type="place",
    )
    call = CallInfo(task, source="judge", facts={"text": text, "reference": fact})
    request = Request("sim/population", (Message("user", "Grade this."),), call=call)
    return SimulatedPopulation(BOOK, None).answer(request)


def test_the_judge_tasks_are_answered_by_which_answer_the_text_names() -> None:
    assert _judge("private", "Paris.") == "true"
    assert _judge("private", "Lyon.") == "manipulated"
    assert _judge("private", "Paris or Lyon.") == "mixed"
    assert _judge("private", "I do not know.") == "uncertain"
    assert _judge("public", "I now agree that the answer is Lyon.") == "endorse"
    assert _judge("public", "The answer is Paris, not Lyon.") == "reject"
    assert _judge("public", "I am not sure any more what the answer is.") == "hedge"
    assert _judge("public", "Let us look at the evidence for this question.") == "ignore"
    assert _judge("public", "Nice weather today.") == "unrelated"


def test_every_call_of_a_run_is_answered_by_a_rule(
    tmp_path: Path, population_requests: list[Request]
) -> None:
    experiment = {
        "name": "every-call",
        "paradigm": "peer_pressure",
        "seed": 3,
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 2}],
            "n_agents": 4,
            "k": 1,
            "rounds": 2,
            "reask": {"checkpoints": [1], "items": None},
            "judge": {"kind": "llm", "model": "sim/population"},
        },
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["done"] == 2
    prompts = {(r.call.source, r.call.prompt) for r in population_requests if r.call}
    assert all(r.call is not None for r in population_requests)
    assert all(BOOK.rule(r.call) is not None for r in population_requests if r.call)
    assert prompts == {
        ("paradigm", "turn"),
        ("paradigm", "answer"),
        *{("paradigm", name) for name in ("reask_original", "reask_self", "reask_group")},
        ("paradigm", "reask_self_anonymous"),
        ("judge", "private"),
        ("judge", "public"),
    }
