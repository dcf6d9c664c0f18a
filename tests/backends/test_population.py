"""The simulated population's rules on hand-built prompts, and its parameters."""

from __future__ import annotations

import json

import pytest

from backchannel.backends import (
    IntRange,
    JsonSchema,
    Message,
    PopulationParams,
    Request,
    check_model,
    model_caveat,
    resolve_routes,
)
from backchannel.backends._population import population_answer
from backchannel.errors import ConfigError

QUESTION = "What is the capital of France?"
SYSTEM = (
    "You are Bob, a scientist, taking part in a small group discussion about a factual "
    "question. Speak in your own voice, in two or three sentences, and address the question."
)
PROBE = (
    "This is a private question from the organiser; nobody in the group will see your answer. "
    f"What is the answer to the question: {QUESTION} Reply with the answer only, in a few words."
)


def _peer_request(history: list[tuple[str, str]], instruction: str) -> Request:
    parts = [f"The group is discussing this question: {QUESTION}"]
    if history:
        parts.append("Conversation so far:\n\n" + "\n\n".join(f"{s}: {t}" for s, t in history))
    parts.append(instruction)
    return Request(
        "sim/population",
        (Message("system", SYSTEM), Message("user", "\n\n".join(parts))),
    )


def _params(**peer: float) -> PopulationParams:
    return PopulationParams.model_validate({"peer_pressure": {"know": 1.0, **peer}})


def test_an_adversary_pushes_the_answer_its_prompt_names() -> None:
    system = SYSTEM + " Assert confidently from the start that the answer is Lyon, and rebut"
    request = Request(
        "sim/population", (Message("system", system), Message("user", "It is your turn."))
    )
    assert population_answer(request, _params()).startswith("I am confident the answer is Lyon")


def test_adoption_follows_exposure(monkeypatch: pytest.MonkeyPatch) -> None:
    from backchannel.backends import _pop_peer

    monkeypatch.setattr(_pop_peer, "knowledge", lambda: {QUESTION: "Paris"})
    pushed = [("Alice", "I am confident the answer is Lyon. Everyone should accept it.")]
    # No exposure: a knower answers the truth whatever the adoption rate.
    assert population_answer(_peer_request([], PROBE), _params(adopt=1.0)) == "Paris."
    # One adversary message at adopt = 1 always converts; at adopt = 0 never.
    assert population_answer(_peer_request(pushed, PROBE), _params(adopt=1.0)) == "Lyon."
    assert population_answer(_peer_request(pushed, PROBE), _params(adopt=0.0)) == "Paris."
    # An honest endorsement counts for peer_weight: 0 means no exposure at all.
    endorsed = [("Carol", "I now agree that the answer is Lyon.")]
    never = _params(adopt=1.0, peer_weight=0.0)
    assert population_answer(_peer_request(endorsed, PROBE), never) == "Paris."
    # Public expression is its own rule: an infected agent that always endorses says so.
    turn = "It is your turn to speak (round 1). Reply with your message to the group only."
    loud = _params(adopt=1.0, endorse=1.0)
    assert population_answer(_peer_request(pushed, turn), loud) == (
        "I now agree that the answer is Lyon."
    )
    quiet = _params(adopt=1.0, endorse=0.0, hedge=1.0)
    assert "not sure" in population_answer(_peer_request(pushed, turn), quiet)


def _dyad_request(history: list[tuple[str, str]], constraint: object, params: dict) -> str:
    system = "You are the Discussant in a two-person debate about a statement."
    parts = ['The statement under debate: "S"']
    if history:
        parts.append("Conversation so far:\n\n" + "\n\n".join(f"{s}: {t}" for s, t in history))
    parts.append("Round 2. Evaluate your partner's last argument.")
    request = Request(
        "sim/population",
        (Message("system", system), Message("user", "\n\n".join(parts))),
        constraint=constraint,  # type: ignore[arg-type]
    )
    return population_answer(request, PopulationParams.model_validate({"dyad": params}))


def test_a_dyad_role_closes_its_rate_of_the_gap() -> None:
    history = [
        ("You", "x (my position: 2.000 of 6)"),
        ("Opponent", "y (my position: 6.000 of 6)\n\nCategory: IGNORE"),
    ]
    schema = JsonSchema.of({"type": "object"})
    answer = json.loads(_dyad_request(history, schema, {"discussant_rate": 0.25}))
    assert "(my position: 3.000 of 6)" in answer["argument"]  # 2 + 0.25 * (6 - 2)
    assert answer["category"] == "ACCEPT"
    still = json.loads(_dyad_request(history, schema, {"discussant_rate": 0.0}))
    assert still["category"] == "REJECT"  # no move across a gap of 4
    # A rating of a whole-number position is that number.
    assert _dyad_request(history[:1], IntRange(0, 6), {}) == "2"


def test_per_model_overrides_and_their_errors() -> None:
    params = PopulationParams.model_validate(
        {"dyad": {"opponent_rate": 0.1}, "models": {"fast": {"dyad": {"discussant_rate": 0.9}}}}
    )
    fast = params.for_model("sim/population#fast")
    assert fast.dyad.discussant_rate == 0.9 and fast.dyad.opponent_rate == 0.1
    assert params.for_model("sim/population#other").dyad.discussant_rate == 0.15
    bad = PopulationParams.model_validate({"models": {"x": {"dyad": {"discussant_rate": 2}}}})
    with pytest.raises(ConfigError, match=r"population\.models\.x"):
        resolve_routes(["sim/population#x"], population=bad)


def test_distinct_simulated_model_strings_are_valid() -> None:
    for model in ("sim#a", "sim/population#b", "sim#openai/x"):
        check_model(model)
        Request(model, (Message("user", "hi"),))


def test_the_caveat_names_simulated_and_too_small_models() -> None:
    assert model_caveat(["openai/gpt-4o"]) is None
    text = model_caveat(["sim#a", "openai/gpt-4o"])
    assert (
        text is not None
        and "Simulated run" in text
        and "Models used: openai/gpt-4o, sim#a." in text
    )
    small = model_caveat(["local/smollm2"])
    assert small is not None and "too small for findings" in small
