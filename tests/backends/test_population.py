"""The simulated population's dispatch by call information, its parameters per section and per
model, and the call information's place outside every cache key."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backchannel.backends import (
    CallInfo,
    LabelSet,
    Message,
    Population,
    PopulationBook,
    PopulationCall,
    PopulationParams,
    Request,
    cache_key,
    check_model,
    model_caveat,
    resolve_routes,
    scripted_answer,
)
from backchannel.backends._population import SimulatedPopulation, population_answer
from backchannel.errors import ConfigError


class Coin(BaseModel):
    model_config = ConfigDict(extra="forbid")
    heads: float = Field(0.5, ge=0, le=1)


def _flip(call: PopulationCall[Coin]) -> str | None:
    if call.info.facts.get("abstain"):
        return None  # the scripted answer
    return (
        "heads"
        if call.uniform(call.model, call.info.agent, "flip") < call.params.heads
        else "tails"
    )


def _label(call: PopulationCall[Coin]) -> str:
    return "yes" if "heads" in str(call.info.facts["text"]) else "no"


COIN = Population(Coin, rules={"flip": _flip}, judges={"verdict": _label})
BOOK = PopulationBook.of("coin", COIN)


def _request(call: CallInfo | None, model: str = "sim/population", text: str = "Flip.") -> Request:
    return Request(model, (Message("user", text),), call=call)


def _answer(call: CallInfo | None, params: dict | None = None, **kwargs: str) -> str:
    population = SimulatedPopulation(BOOK, PopulationParams.model_validate(params or {}))
    return population.answer(_request(call, **kwargs))


def test_a_call_is_answered_by_the_rule_its_prompt_name_names() -> None:
    flip = CallInfo("flip", paradigm="coin", agent="Ann")
    assert _answer(flip, {"coin": {"heads": 1.0}}) == "heads"
    assert _answer(flip, {"coin": {"heads": 0.0}}) == "tails"
    # The wording of the prompt plays no part: any text, the same answer.
    assert _answer(flip, {"coin": {"heads": 1.0}}, text="Something else entirely.") == "heads"


def test_what_no_rule_answers_gets_the_scripted_answer() -> None:
    for call in (
        None,
        CallInfo("unknown", paradigm="coin"),
        CallInfo("flip", facts={"abstain": True}),
        CallInfo("flip", source="screening"),  # a paradigm's rules answer its own calls only
        CallInfo("flip", source="judge"),  # a judge task of that name does not exist
    ):
        request = _request(call)
        assert _answer(call) == scripted_answer(request)


def test_a_judge_call_is_answered_by_the_judge_rules_by_task_name() -> None:
    verdict = CallInfo("verdict", source="judge", facts={"text": "heads it was"})
    assert _answer(verdict) == "yes"
    assert _answer(CallInfo("verdict", source="judge", facts={"text": "tails"})) == "no"


def test_a_screening_rule_answers_only_screening_calls() -> None:
    screen = Population(Coin, rules={"screen": lambda call: "known"}, source="screening")
    book = PopulationBook({"screening": screen})
    population = SimulatedPopulation(book, None)
    asked = _request(CallInfo("screen", source="screening"))
    assert population.answer(asked) == "known"
    not_screening = _request(CallInfo("screen"))
    assert population.answer(not_screening) == scripted_answer(not_screening)
    with pytest.raises(ValueError, match="source"):
        Population(Coin, source="judge")


def test_sections_are_the_rules_parameters_with_defaults_filled_in() -> None:
    resolved = BOOK.resolve(PopulationParams.model_validate({"coin": {"heads": 0.25}}))
    assert resolved.sections() == {"coin": {"heads": 0.25}}
    assert BOOK.resolve(None).sections() == {"coin": {"heads": 0.5}}
    with pytest.raises(ValidationError) as unknown:
        BOOK.resolve(PopulationParams.model_validate({"dice": {}}))
    assert unknown.value.errors()[0]["loc"] == ("dice",)
    with pytest.raises(ValidationError) as field:
        BOOK.resolve(PopulationParams.model_validate({"coin": {"tails": 1}}))
    assert field.value.errors()[0]["loc"] == ("coin", "tails")
    with pytest.raises(ValidationError):
        PopulationParams.model_validate({"coin": 3})  # a section is a mapping


def test_per_model_overrides_and_their_errors() -> None:
    params = PopulationParams.model_validate(
        {"coin": {"heads": 0.0}, "models": {"lucky": {"coin": {"heads": 1.0}}}}
    )
    flip = CallInfo("flip", agent="Ann")
    population = SimulatedPopulation(BOOK, params)
    assert population.answer(_request(flip, "sim/population#lucky")) == "heads"
    assert population.answer(_request(flip, "sim/population#other")) == "tails"
    bad = PopulationParams.model_validate({"models": {"x": {"coin": {"heads": 2}}}})
    with pytest.raises(ValueError, match=r"population\.models\.x\.coin\.heads: "):
        BOOK.resolve(bad)
    with pytest.raises(ConfigError, match=r"population\.models\.x\.coin\.heads"):
        resolve_routes(["sim/population#x"], population=bad, population_rules=BOOK)
    with pytest.raises(ConfigError, match=r"population\.dice"):
        resolve_routes(
            ["sim/population"],
            population=PopulationParams.model_validate({"dice": {}}),
            population_rules=BOOK,
        )


def test_a_recorded_section_keeps_only_what_the_rules_read() -> None:
    recorded = PopulationParams.model_validate(
        {"coin": {"heads": 0.1}, "dice": {"sides": 6}, "models": {"a": {"dice": {}, "coin": {}}}}
    )
    readable = BOOK.readable(recorded)
    assert readable.sections() == {"coin": {"heads": 0.1}}
    assert readable.models == {"a": {"coin": {}}}


def test_the_cache_key_holds_the_parameters_and_never_the_call_information() -> None:
    def identity(params: dict) -> str:
        routes = resolve_routes(
            ["sim/population"],
            population=PopulationParams.model_validate(params),
            population_rules=BOOK,
        )
        return str(routes["sim/population"].cache_identity)

    assert identity({"coin": {"heads": 0.5}}) == identity({})  # the defaults, written out
    assert identity({"coin": {"heads": 0.4}}) != identity({})
    plain = _request(None)
    informed = _request(CallInfo("flip", agent="Ann", facts={"secret": 1}))
    assert plain == informed and hash(plain) == hash(informed)
    assert cache_key(plain, "sim/population") == cache_key(informed, "sim/population")


def test_without_rules_every_call_gets_the_scripted_answer_and_no_section_is_known() -> None:
    request = _request(None, text="Hello.")
    assert population_answer(request, PopulationParams()) == scripted_answer(request)
    with pytest.raises(ValidationError):
        population_answer(request, PopulationParams.model_validate({"testimony": {"trust": 0.5}}))


def test_a_constraint_is_kept_by_the_scripted_fallback() -> None:
    request = Request("sim/population", (Message("user", "?"),), constraint=LabelSet(("a", "b")))
    assert SimulatedPopulation(BOOK, None).answer(request) in ("a", "b")


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
