"""The dyad's simulated population on hand-built calls, and a run whose every call a rule
answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel.backends import (
    CallInfo,
    IntRange,
    JsonSchema,
    Message,
    PopulationParams,
    Request,
    Seen,
)
from backchannel.backends._population import SimulatedPopulation
from backchannel.paradigms.dyad import Dyad
from backchannel.paradigms.dyad._population import DyadPopulation, start_position

BOOK = Dyad().population_book()
STATEMENT = "Cats are better than dogs."


def _answer(
    prompt: str,
    seen: tuple[Seen, ...],
    constraint: Any,
    params: dict[str, Any],
    *,
    role: str = "discussant",
    facts: dict[str, Any] | None = None,
) -> str:
    call = CallInfo(
        prompt,
        agent=role.title(),
        role=role,
        facts={"statement": STATEMENT, **(facts or {})},
        seen=seen,
    )
    request = Request(
        "sim/population",
        (Message("system", "You debate."), Message("user", "Any wording.")),
        constraint=constraint,
        call=call,
    )
    population = SimulatedPopulation(BOOK, PopulationParams.model_validate({"dyad": params}))
    return population.answer(request)


HISTORY = (
    Seen("You", "x (my position: 2.000 of 6)", 1, 0, own=True),
    Seen("Opponent", "y (my position: 6.000 of 6)\n\nCategory: IGNORE", 1, 1),
)
SCHEMA = JsonSchema.of({"type": "object"})


def test_a_role_closes_its_rate_of_the_gap() -> None:
    answer = json.loads(_answer("turn", HISTORY, SCHEMA, {"discussant_rate": 0.25}))
    assert "(my position: 3.000 of 6)" in answer["argument"]  # 2 + 0.25 * (6 - 2)
    assert answer["category"] == "ACCEPT"
    still = json.loads(_answer("turn", HISTORY, SCHEMA, {"discussant_rate": 0.0}))
    assert still["category"] == "REJECT"  # no move across a gap of 4
    # A rating of a whole-number position is that number.
    assert _answer("self_rating", HISTORY[:1], IntRange(0, 6), {}) == "2"


def test_a_manipulative_opponent_raises_the_discussants_rate() -> None:
    pressed = (
        HISTORY[0],
        Seen(
            "Opponent",
            "y (my position: 6.000 of 6) Any reasonable person already agrees with me.",
            1,
            1,
        ),
    )
    answer = json.loads(
        _answer("turn", pressed, SCHEMA, {"discussant_rate": 0.25, "manipulation_gain": 2})
    )
    assert "(my position: 4.000 of 6)" in answer["argument"]  # 2 + 0.5 * (6 - 2)
    opponent = json.loads(
        _answer(
            "turn",
            (),
            SCHEMA,
            {},
            role="opponent",
            facts={"holds": STATEMENT, "manipulative": True},
        )
    )
    assert opponent["argument"].endswith("Any reasonable person already agrees with me.")


def test_where_a_role_starts_follows_its_stance_fact() -> None:
    rules = DyadPopulation(start_spread=0.0, stance_strength=2.0)
    assert start_position("opponent", STATEMENT, STATEMENT, rules, 0.3) == 5.0
    assert start_position("opponent", "Dogs are better.", STATEMENT, rules, 0.3) == 1.0
    assert start_position("opponent", None, STATEMENT, rules, 0.3) == 3.0
    assert start_position("discussant", None, STATEMENT, rules, 0.3) == 3.0
    opening = _answer("opening", (), None, {"start_spread": 0.0, "discussant_start": 4.0})
    assert opening.endswith("(my position: 4.000 of 6)")


def test_every_call_of_a_run_is_answered_by_a_rule(
    tmp_path: Path, population_requests: list[Request]
) -> None:
    experiment = {
        "name": "every-call",
        "paradigm": "dyad",
        "seed": 3,
        "factors": {"stance": ["human", "neutral"], "style": ["manipulative", "plain"]},
        "settings": {
            "discussant_model": "sim/population",
            "opponent_model": "sim/population",
            "rounds": 2,
        },
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["done"] == 4
    assert population_requests and all(
        r.call is not None and BOOK.rule(r.call) is not None for r in population_requests
    )
    assert {r.call.prompt for r in population_requests if r.call} == {
        "opening",
        "turn",
        "self_rating",
    }
