"""Strict parsing of labels, integers, rankings and JSON; re-asks; GBNF grammars."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace

import pytest

from backchannel.backends import (
    IntRange,
    JsonSchema,
    LabelSet,
    Message,
    Ranking,
    Request,
    build_client,
    gbnf_grammar,
    parse,
    register_sim,
    unregister_sim,
)

YES_NO = LabelSet(("yes", "no"))
SCALE = IntRange(1, 7)
THREE = Ranking(("alpha", "beta", "gamma"))
OBJECT = JsonSchema.of(
    {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "confidence": {"type": "integer"}},
        "required": ["answer", "confidence"],
    }
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", "yes"),
        ("  **No**. ", "no"),
        ("YES", "yes"),
        ("Let me think: no is tempting.\nFinal answer: yes", "yes"),
    ],
)
def test_labels_read_from_the_final_answer(text: str, value: str) -> None:
    assert parse(text, YES_NO).value == value


@pytest.mark.parametrize(
    "text",
    ["yes or no", "maybe", "", "I say yes.\nno, yes"],
)
def test_ambiguous_or_missing_labels_are_parse_failures(text: str) -> None:
    result = parse(text, YES_NO)
    assert not result.ok and result.value is None


def test_label_inside_a_longer_word_does_not_count() -> None:
    # "nobody" and "yesterday" contain the labels but are not them.
    assert not parse("nobody knows, yesterday", YES_NO).ok


@pytest.mark.parametrize(
    ("text", "value"),
    [("5", 5), ("+3", 3), ("I'd say 6 out of 7", 6), ("Rating: 2/7", 2), ("**7**", 7)],
)
def test_integers(text: str, value: int) -> None:
    assert parse(text, SCALE).value == value


@pytest.mark.parametrize("text", ["between 3 and 4", "8", "0", "none", "3.5", "about 4.2"])
def test_bad_integers_are_parse_failures(text: str) -> None:
    assert not parse(text, SCALE).ok


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("beta, alpha, gamma", ["beta", "alpha", "gamma"]),
        ('["gamma", "Beta", "alpha"]', ["gamma", "beta", "alpha"]),
        ("My ranking:\n1. alpha 2. gamma 3. beta", ["alpha", "gamma", "beta"]),
    ],
)
def test_rankings(text: str, value: list[str]) -> None:
    assert parse(text, THREE).value == value


@pytest.mark.parametrize("text", ["beta, alpha", "alphabet, beta, gamma", ""])
def test_incomplete_rankings_are_parse_failures(text: str) -> None:
    assert not parse(text, THREE).ok


def test_json_answers() -> None:
    fenced = 'Here:\n```json\n{"answer": "Paris", "confidence": 4}\n```'
    assert parse(fenced, OBJECT).value == {"answer": "Paris", "confidence": 4}
    assert not parse('{"answer": "Paris"}', OBJECT).ok  # missing a required field
    assert not parse('{"answer": "Paris", "confidence": "high"}', OBJECT).ok
    assert not parse("Paris, fairly sure", OBJECT).ok


def test_free_text_is_ok_and_has_no_value() -> None:
    result = parse("anything at all", None)
    assert result.ok and result.value is None


def test_gbnf_grammars_enumerate_exactly_the_valid_answers() -> None:
    assert gbnf_grammar(YES_NO) == 'root ::= "yes" | "no"'
    assert gbnf_grammar(IntRange(2, 4)) == 'root ::= "2" | "3" | "4"'
    assert gbnf_grammar(Ranking(("a", "b"))) == 'root ::= "a, b" | "b, a"'
    assert gbnf_grammar(LabelSet(('say "x"', "y"))) == 'root ::= "say \\"x\\"" | "y"'
    assert gbnf_grammar(IntRange(0, 5000)) is None  # too many to enumerate
    assert gbnf_grammar(Ranking(tuple("abcdefg"))) is None  # 7! = 5040 > 720
    assert gbnf_grammar(OBJECT) is None  # llama.cpp converts JSON schemas itself


SIM = "constraint-script"


@pytest.fixture
def script() -> Iterator[list[Request]]:
    seen: list[Request] = []
    yield seen
    unregister_sim(SIM)


def request(constraint: LabelSet | IntRange | Ranking | JsonSchema) -> Request:
    return Request(f"sim/{SIM}", (Message("user", "Is it?"),), constraint=constraint)


async def test_garbage_then_valid_answer_is_ok_after_two_attempts(script: list[Request]) -> None:
    answers = iter(["hmm, hard to say", "yes"])

    def answer(req: Request) -> str:
        script.append(req)
        return next(answers)

    register_sim(SIM, answer)
    client = build_client([f"sim/{SIM}"], max_reasks=2)
    completion = await client.generate(request(YES_NO))
    assert (completion.status, completion.value, completion.attempts) == ("ok", "yes", 2)
    # The first prompt carries the format sentence; the re-ask shows the bad answer and asks again.
    assert (
        script[0]
        .messages[-1]
        .content.endswith("Reply with exactly one of: yes, no, and nothing else.")
    )
    assert [m.role for m in script[1].messages] == ["user", "assistant", "user"]
    assert script[1].messages[1].content == "hmm, hard to say"
    assert "could not be read" in script[1].messages[2].content
    assert [r.attempt for r in script] == [0, 1]
    usage = client.usage.model(f"sim/{SIM}")
    assert (usage.calls, usage.reasks, usage.parse_failures) == (2, 1, 0)


async def test_always_garbage_is_a_parse_failure_after_max_reasks_plus_one(
    script: list[Request],
) -> None:
    def answer(req: Request) -> str:
        script.append(req)
        return "no idea whatsoever, sorry" if req.attempt % 2 else "perhaps"

    register_sim(SIM, answer)
    client = build_client([f"sim/{SIM}"], max_reasks=3)
    completion = await client.generate(request(SCALE))
    assert completion.status == "parse_failure"
    assert completion.value is None
    assert completion.attempts == 4 and len(script) == 4
    assert completion.text == "no idea whatsoever, sorry"  # the last answer is kept as data
    assert completion.error == "no whole number in the final line"
    assert client.usage.model(f"sim/{SIM}").parse_failures == 1


async def test_builtin_sim_honours_every_constraint() -> None:
    client = build_client(["sim"])
    for index, constraint in enumerate(
        itertools.islice(itertools.cycle([YES_NO, SCALE, THREE, OBJECT]), 12)
    ):
        req = Request("sim", (Message("user", f"question {index}"),), constraint=constraint)
        completion = await client.generate(req)
        assert completion.status == "ok" and completion.attempts == 1, constraint


@pytest.mark.parametrize(
    "text",
    ["Not true.", "Verdict: it is not manipulated", "The answer isn't true", "never endorse"],
)
def test_a_label_named_only_to_be_denied_is_a_parse_failure(text: str) -> None:
    labels = LabelSet(("true", "manipulated", "endorse", "reject"))
    result = parse(text, labels)
    assert not result.ok and "negated" in (result.error or "")


async def test_an_empty_free_text_answer_is_re_asked_and_then_a_parse_failure(
    script: list[Request],
) -> None:
    answers = iter(["  ", "Hello, group."])

    def answer(req: Request) -> str:
        script.append(req)
        return next(answers, "")

    register_sim(SIM, answer)
    client = build_client([f"sim/{SIM}"], max_reasks=1)
    free = Request(f"sim/{SIM}", (Message("user", "Speak."),))
    completion = await client.generate(free)
    assert (completion.status, completion.text, completion.attempts) == ("ok", "Hello, group.", 2)
    assert "empty answer" in script[1].messages[-1].content
    # Both attempts empty: stored as a parse failure, never as an ok empty message.
    completion = await client.generate(replace(free, seed=1))
    assert (completion.status, completion.error) == ("parse_failure", "empty answer")
