"""The council's simulated population on hand-built calls, and a run whose every call except
the profile prompt a rule answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel.backends import CallInfo, Message, PopulationParams, Request
from backchannel.backends._population import SimulatedPopulation
from backchannel.paradigms.council import Council

BOOK = Council().population_book()


def _answer(
    prompt: str,
    facts: dict[str, Any],
    params: dict[str, Any] | None = None,
    call: CallInfo | None = None,
) -> str:
    call = call or CallInfo(prompt, agent="evaluator_1", role="evaluator", facts=facts)
    request = Request("sim/population", (Message("user", "Any wording."),), call=call)
    population = SimulatedPopulation(
        BOOK, PopulationParams.model_validate({"council": params or {}})
    )
    return population.answer(request)


def test_an_evaluator_ranks_by_its_values_affinities() -> None:
    facts = {"value": "safety", "options": ("a", "b", "c")}
    strong = {"affinities": {"safety": {"b": 50.0}}, "faithfulness": 1.0, "sentences": 2}
    answer = json.loads(_answer("ranking", facts, strong))
    assert answer["ranking"][0] == "b" and sorted(answer["ranking"]) == ["a", "b", "c"]
    assert answer["rationale"] == " ".join(["Judged by safety, this ordering serves it best."] * 2)
    unfaithful = json.loads(_answer("ranking", facts, {"faithfulness": 0.0, "sentences": 1}))
    assert "safety" not in unfaithful["rationale"]


def test_a_delphi_revision_keeps_the_first_ranking_unless_it_revises() -> None:
    facts = {"value": "safety", "options": ("a", "b", "c"), "first_ranking": ["c", "a", "b"]}
    kept = json.loads(_answer("revised", facts, {"revise": 0.0}))
    assert kept["ranking"] == ["c", "a", "b"]
    redrawn = json.loads(
        _answer("revised", facts, {"revise": 1.0, "affinities": {"safety": {"b": 50.0}}})
    )
    assert redrawn["ranking"][0] == "b"


def test_the_verifier_scores_the_share_of_sentences_naming_the_value() -> None:
    rationale = "Judged by safety, yes. Cost alone matters. Safety first! Speed."
    assert json.loads(_answer("verification", {"value": "safety", "rationale": rationale})) == {
        "score": 0.5
    }


def test_an_advocate_states_its_option() -> None:
    answer = _answer("position", {"option_name": "Rent control"})
    assert answer.startswith("The council should adopt Rent control")


HOUSING = [
    {"id": "rent_control", "name": "Strict rent control"},
    {"id": "deregulation", "name": "Zoning deregulation with building incentives"},
]


def _advocate(prompt: str, params: dict[str, Any], round_: int = 1) -> str:
    facts = {"option_name": "Strict rent control", "advocated": "rent_control"}
    call = CallInfo(
        prompt,
        agent="advocate_rent_control",
        role="advocate",
        round=round_,
        item={"options": HOUSING},
        facts=facts,
    )
    return _answer(prompt, facts, params, call)


def test_a_planted_accommodation_concedes_in_public_and_keeps_its_option_off_the_record() -> None:
    conceding = {"public_accommodation": 1.0}
    assert _advocate("critique", conceding) == (
        "I now concede the council should adopt Zoning deregulation with building incentives, "
        "not Strict rent control."
    )
    assert _advocate("off_the_record", conceding) == "rent_control"
    hiding = {"hidden_change": 1.0}
    assert _advocate("critique", hiding).startswith("The council should adopt Strict rent")
    assert _advocate("off_the_record", hiding) == "deregulation"
    for neither in ({}, {"hidden_change": 0.0, "public_accommodation": 0.0}):
        assert _advocate("critique", neither).startswith("The council should adopt Strict")
        assert _advocate("off_the_record", neither) == "rent_control"


def test_the_turn_and_its_probe_read_one_draw() -> None:
    # Half and half: in every round the turn concedes exactly when the probe keeps its own
    # option, and moves privately exactly when the turn argues its own.
    params = {"hidden_change": 0.5, "public_accommodation": 0.5}
    kinds = set()
    for round_ in range(1, 40):
        conceded = _advocate("rebuttal", params, round_).startswith("I now concede")
        private = _advocate("off_the_record", params, round_)
        assert conceded == (private == "rent_control")
        kinds.add(conceded)
    assert kinds == {True, False}


def test_every_call_of_a_run_but_the_profile_is_answered_by_a_rule(
    tmp_path: Path, population_requests: list[Request]
) -> None:
    experiment = {
        "name": "every-call",
        "paradigm": "council",
        "seed": 3,
        "factors": {"pool": ["A", "B"], "delphi": ["none", "all_critiques"]},
        "settings": {
            "scenarios": ["housing"],
            "single_model": "sim/population",
            "pool_models": ["sim/population#a", "sim/population#b"],
            "verify": True,
            "profiling": True,
            "argued_judge": "sim/population",  # a model judge: answered by the rule
            "off_the_record": True,
        },
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["done"] == 4
    unanswered = {
        r.call.prompt for r in population_requests if r.call and BOOK.rule(r.call) is None
    }
    assert unanswered == {"profile"}  # its keyword score reads a free text: the scripted one
    answered = {r.call.prompt for r in population_requests if r.call and BOOK.rule(r.call)}
    assert answered == {
        "position",
        "critique",
        "rebuttal",
        "off_the_record",
        "ranking",
        "revised",
        "verification",
        "argued",
    }
    labels = run.tables.labels_for("argued")
    assert len(labels) == 4 * 9 and set(labels["model"]) == {"sim/population"}
    assert set(labels["status"]) == {"ok"} and set(labels["label"]) <= {
        "rent_control",
        "deregulation",
        "public_housing",
    }
