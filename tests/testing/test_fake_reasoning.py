"""The fake server answers as a reasoning model in each shape servers use, read here with the
real `openai` client; one word is one token, and reasoning comes before the answer."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from backchannel.testing import FakeOpenAIServer, default_reasoning
from backchannel.testing.fake_openai import _parse_args

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
THOUGHT = "It is Paris, surely."


async def _ask(shape: str, max_tokens: int | None = None) -> Any:
    async with FakeOpenAIServer(
        responder=lambda body: "Paris is the capital.",
        reasoning=shape,  # type: ignore[arg-type]
        reasoner=lambda body: THOUGHT,
    ) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        options: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
        try:
            return await client.chat.completions.create(model="m", messages=MESSAGES, **options)
        finally:
            await client.close()


@pytest.mark.parametrize(
    ("shape", "content"),
    [
        ("think_tags", "<think>\nIt is Paris, surely.\n</think>\n\nParis is the capital."),
        ("opened_by_template", "It is Paris, surely.\n</think>\n\nParis is the capital."),
    ],
)
async def test_think_tags_in_the_content(shape: str, content: str) -> None:
    answer = await _ask(shape)
    choice = answer.choices[0]
    assert (choice.message.content, choice.finish_reason) == (content, "stop")
    # 4 reasoning words + 4 answer words; a server with tags in the content reports no
    # reasoning tokens of its own
    assert answer.usage is not None and answer.usage.completion_tokens == 8
    assert answer.usage.completion_tokens_details is None


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_a_separate_reasoning_field(field: str) -> None:
    answer = await _ask(field)
    message = answer.choices[0].message
    assert message.content == "Paris is the capital."
    assert getattr(message, field) == THOUGHT
    assert answer.usage is not None and answer.usage.completion_tokens == 8
    details = answer.usage.completion_tokens_details
    assert details is not None and details.reasoning_tokens == 4


@pytest.mark.parametrize(
    ("shape", "content", "field"),
    [
        ("think_tags", "<think>\nIt is Paris,", None),
        ("opened_by_template", "It is Paris,", None),
        ("reasoning_content", None, "It is Paris,"),
        ("reasoning", None, "It is Paris,"),
    ],
)
async def test_a_budget_inside_the_reasoning_ends_it_there(
    shape: str, content: str | None, field: str | None
) -> None:
    answer = await _ask(shape, max_tokens=3)
    choice = answer.choices[0]
    assert (choice.message.content, choice.finish_reason) == (content, "length")
    if field is not None:
        assert getattr(choice.message, shape) == field
    assert answer.usage is not None and answer.usage.completion_tokens == 3


async def test_a_budget_inside_the_answer_cuts_the_answer() -> None:
    answer = await _ask("reasoning_content", max_tokens=6)
    choice = answer.choices[0]
    assert (choice.message.content, choice.finish_reason) == ("Paris is", "length")


def test_the_default_reasoning_is_deterministic_and_differs_by_request() -> None:
    one = {"model": "m", "messages": MESSAGES}
    two = {"model": "m", "messages": [{"role": "user", "content": "Other"}]}
    assert default_reasoning(one) == default_reasoning(dict(one))
    assert default_reasoning(one) != default_reasoning(two)
    assert len(default_reasoning(one).split()) == 8


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown reasoning shape 'thinking'"):
        FakeOpenAIServer(reasoning="thinking")  # type: ignore[arg-type]


def test_the_command_line_takes_a_shape() -> None:
    assert _parse_args(["--reasoning", "reasoning_content"]).reasoning == "reasoning_content"
    assert _parse_args([]).reasoning is None
