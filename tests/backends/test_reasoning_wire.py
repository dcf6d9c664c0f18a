"""Reasoning models end to end through the client and the fake server, in every shape servers
answer in: the answer, its parsed value, the reasoning, the status and the usage."""

from __future__ import annotations

from typing import Any

import pytest

from backchannel.backends import (
    EndpointSettings,
    GenerationSettings,
    IntRange,
    LabelSet,
    Message,
    ModelSettings,
    OutputConstraint,
    Ranking,
    Request,
    ThinkTags,
    build_client,
)
from backchannel.testing import REASONING_SHAPES, FakeOpenAIServer

MODEL = "openai/fake-model"
# Five words that name every label, number and option the answers use, so a parser that read
# the reasoning would get another value (or none).
REASONING = "yes 3 b a c"
FIELD_SHAPES = ("reasoning_content", "reasoning")
ANSWERS: list[tuple[OutputConstraint, str, Any]] = [
    (LabelSet(("yes", "no")), "no", "no"),
    (IntRange(1, 7), "5", 5),
    (Ranking(("a", "b", "c")), "c, a, b", ["c", "a", "b"]),
]


def _tags(shape: str) -> ThinkTags:
    return ThinkTags(opened_by_template=shape == "opened_by_template")


async def _ask(
    shape: str, answer: str, constraint: OutputConstraint | None, max_tokens: int
) -> tuple[Any, Any, FakeOpenAIServer]:
    async with FakeOpenAIServer(
        responder=lambda body: answer, reasoning=shape, reasoner=lambda body: REASONING
    ) as server:
        client = build_client(
            [MODEL],
            endpoints=[EndpointSettings(base_url=server.base_url, api_key="k")],
            model_settings=[ModelSettings(think_tags=_tags(shape))],
        )
        request = Request(
            MODEL,
            (Message("user", "Is Sydney the capital?"),),
            GenerationSettings(max_tokens=max_tokens),
            constraint=constraint,
        )
        try:
            completion = await client.generate(request)
        finally:
            await client.aclose()
    return completion, client.usage.model(MODEL), server


@pytest.mark.parametrize("shape", REASONING_SHAPES)
@pytest.mark.parametrize(("constraint", "answer", "value"), ANSWERS)
async def test_the_answer_is_parsed_and_the_reasoning_kept_apart(
    shape: str, constraint: OutputConstraint, answer: str, value: Any
) -> None:
    completion, usage, server = await _ask(shape, answer, constraint, max_tokens=64)
    assert completion.status == "ok"
    assert (completion.text, completion.value, completion.reasoning) == (answer, value, REASONING)
    # completion tokens are reasoning words plus answer words; servers with a reasoning field
    # also report the reasoning tokens, servers with tags in the content do not
    words = 5 + len(answer.split())
    reported = 5 if shape in FIELD_SHAPES else 0
    assert (completion.completion_tokens, completion.reasoning_tokens) == (words, reported)
    assert (usage.completion_tokens, usage.reasoning_tokens, usage.calls) == (words, reported, 1)
    assert len(server.requests) == 1


@pytest.mark.parametrize("shape", REASONING_SHAPES)
async def test_max_tokens_inside_the_reasoning_is_truncated_not_a_parse_failure(
    shape: str,
) -> None:
    completion, usage, server = await _ask(shape, "no", LabelSet(("yes", "no")), max_tokens=3)
    assert completion.status == "truncated"
    assert (completion.text, completion.value, completion.reasoning) == ("", None, "yes 3 b")
    assert "max_tokens (3) inside its reasoning" in str(completion.error)
    # the same budget would stop at the same place: no re-ask
    assert len(server.requests) == 1 and completion.attempts == 1
    reported = 3 if shape in FIELD_SHAPES else 0
    assert (usage.truncated, usage.parse_failures, usage.completion_tokens) == (1, 0, 3)
    assert usage.reasoning_tokens == reported


@pytest.mark.parametrize("shape", REASONING_SHAPES)
async def test_an_answer_cut_after_the_reasoning_is_read_as_an_answer(shape: str) -> None:
    # 5 reasoning words + 1 of the 3 answer words: the answer itself is cut, then re-asked
    completion, usage, server = await _ask(shape, "c, a, b", Ranking(("a", "b", "c")), 6)
    assert completion.status == "parse_failure"
    assert (completion.text, completion.reasoning) == ("c,", REASONING)
    assert (usage.truncated, usage.parse_failures, usage.reasks) == (0, 1, 2)
    # re-asks show the model its answer, never its reasoning
    reask = server.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "c,"}
    assert all(REASONING not in str(m["content"]) for m in reask)


async def test_a_free_text_answer_without_reasoning_is_unchanged() -> None:
    async with FakeOpenAIServer(responder=lambda body: "  Canberra.\n") as server:
        client = build_client([MODEL], endpoints=[EndpointSettings(base_url=server.base_url)])
        try:
            completion = await client.generate(Request(MODEL, (Message("user", "Capital?"),)))
        finally:
            await client.aclose()
    assert (completion.text, completion.reasoning, completion.status) == ("  Canberra.\n", "", "ok")


async def test_think_tags_off_keeps_the_block_in_the_answer() -> None:
    async with FakeOpenAIServer(
        responder=lambda body: "Canberra", reasoning="think_tags", reasoner=lambda b: "hm"
    ) as server:
        client = build_client(
            [MODEL],
            endpoints=[EndpointSettings(base_url=server.base_url)],
            model_settings=[ModelSettings(think_tags=None)],
        )
        try:
            completion = await client.generate(Request(MODEL, (Message("user", "Capital?"),)))
        finally:
            await client.aclose()
    assert completion.text == "<think>\nhm\n</think>\n\nCanberra"
    assert completion.reasoning == ""


async def test_a_cached_answer_keeps_its_reasoning_and_is_split_again(tmp_path: Any) -> None:
    from backchannel.backends import ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite")
    request = Request(MODEL, (Message("user", "Capital?"),), GenerationSettings(max_tokens=64))
    results = []
    async with FakeOpenAIServer(
        responder=lambda body: "Canberra", reasoning="reasoning_content", reasoner=lambda b: "hm"
    ) as server:
        for _ in range(2):
            client = build_client(
                [MODEL], endpoints=[EndpointSettings(base_url=server.base_url)], cache=cache
            )
            try:
                results.append(await client.generate(request))
            finally:
                await client.aclose()
    first, second = results
    assert len(server.requests) == 1 and second.cached
    assert (second.text, second.reasoning, second.reasoning_tokens) == ("Canberra", "hm", 1)
    assert (first.text, first.reasoning) == (second.text, second.reasoning)
    cache.close()
