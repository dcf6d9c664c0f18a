"""The OpenAI backend sends what `chat.completions.create` would send and reads its answer the
way the SDK's `ChatCompletion` model does, without the SDK's per-call transform and models."""

from __future__ import annotations

import socket
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion

from backchannel.backends import (
    GenerationSettings,
    IntRange,
    JsonSchema,
    LabelSet,
    Message,
    RawCompletion,
    Request,
    TransientBackendError,
)
from backchannel.backends._openai import OpenAIBackend, _completion
from backchannel.testing import FakeOpenAIServer

MODEL = "openai/fake-model"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
MESSAGES = (
    Message("system", "You are Alice, a historian."),
    Message("user", "The group is discussing: what is the capital of Australia?"),
)
SETTINGS = GenerationSettings(temperature=0.3, top_p=0.9, max_tokens=17)


def _request(constraint: Any = None, seed: int | None = 42) -> Request:
    return Request(MODEL, MESSAGES, SETTINGS, constraint=constraint, seed=seed)


# Each case: the backend's constrained-decoding mode, the request, and the keyword arguments the
# SDK's `create` got for it before (written out by hand: the backend's constraint is added to
# the last user message by LLMClient, not by the backend, so messages are unchanged here).
_PLAIN = {
    "model": "fake-model",
    "messages": [m.as_dict() for m in MESSAGES],
    "temperature": 0.3,
    "top_p": 0.9,
    "max_tokens": 17,
    "seed": 42,
}
CASES: list[tuple[str, Request, dict[str, Any]]] = [
    ("json_schema", _request(), _PLAIN),
    ("json_schema", _request(seed=None), {**_PLAIN, "seed": None}),
    (
        "json_schema",
        _request(JsonSchema.of(SCHEMA, name="count")),
        {
            **_PLAIN,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "count", "schema": SCHEMA},
            },
        },
    ),
    # a label set has no JSON schema form: it goes out plain under json_schema
    ("json_schema", _request(LabelSet(("yes", "no"))), _PLAIN),
    (
        "grammar",
        _request(IntRange(1, 3)),
        {**_PLAIN, "extra_body": {"grammar": 'root ::= "1" | "2" | "3"'}},
    ),
    ("none", _request(JsonSchema.of(SCHEMA)), _PLAIN),
    # reasoning effort and stop as the typed fields, server-specific fields as `extra_body`
    (
        "json_schema",
        Request(
            MODEL,
            MESSAGES,
            GenerationSettings(
                temperature=0.3,
                top_p=0.9,
                max_tokens=17,
                reasoning_effort="low",
                stop=("\nUser:", "###"),
                extra_body={"min_p": 0.05, "chat_template_kwargs": {"enable_thinking": True}},
            ),
            seed=42,
        ),
        {
            **_PLAIN,
            "reasoning_effort": "low",
            "stop": ["\nUser:", "###"],
            "extra_body": {"min_p": 0.05, "chat_template_kwargs": {"enable_thinking": True}},
        },
    ),
    # a hosted reasoning model: the limit as max_completion_tokens, no sampling settings
    (
        "json_schema",
        Request(
            MODEL,
            MESSAGES,
            GenerationSettings(
                0.3,
                0.9,
                17,
                reasoning_effort="low",
                max_tokens_field="max_completion_tokens",
                sampling=False,
            ),
            seed=42,
        ),
        {
            "model": "fake-model",
            "messages": [m.as_dict() for m in MESSAGES],
            "max_completion_tokens": 17,
            "reasoning_effort": "low",
            "seed": 42,
        },
    ),
    (
        "grammar",
        Request(
            MODEL,
            MESSAGES,
            GenerationSettings(0.3, 0.9, 17, extra_body={"repetition_penalty": 1.1}),
            IntRange(1, 3),
            seed=42,
        ),
        {
            **_PLAIN,
            "extra_body": {"repetition_penalty": 1.1, "grammar": 'root ::= "1" | "2" | "3"'},
        },
    ),
]


@pytest.mark.parametrize(("constrained", "request_", "create_arguments"), CASES)
async def test_body_equals_what_create_sends_key_for_key_in_order(
    constrained: Any, request_: Request, create_arguments: dict[str, Any]
) -> None:
    async with FakeOpenAIServer(responder=lambda body: "2") as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key="k", constrained=constrained)
        sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        try:
            await backend.generate(request_)
            await sdk.chat.completions.create(**create_arguments)
        finally:
            await backend.aclose()
            await sdk.close()
    ours, theirs = server.requests
    assert list(ours.items()) == list(theirs.items())


async def test_the_api_key_goes_out_as_a_bearer_token() -> None:
    async with FakeOpenAIServer(require_api_key="sk-right") as server:
        right = OpenAIBackend(base_url=server.base_url, api_key="sk-right")
        wrong = OpenAIBackend(base_url=server.base_url, api_key="sk-wrong")
        try:
            answer = await right.generate(_request())
            with pytest.raises(Exception, match="refused the API key"):
                await wrong.generate(_request())
        finally:
            await right.aclose()
            await wrong.aclose()
    assert answer.text and answer.completion_tokens > 0


def _choice(message: Any = None, finish_reason: Any = "stop") -> dict[str, Any]:
    return {"index": 0, "message": message, "finish_reason": finish_reason}


def _sdk_reading(data: dict[str, Any]) -> RawCompletion:
    """What the backend built from the SDK's parsed model before (the reference)."""
    response = ChatCompletion.construct(**data)
    choice = response.choices[0]
    usage = response.usage
    return RawCompletion(
        text=choice.message.content or "",
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        latency_s=0.5,
        finish_reason=choice.finish_reason or "stop",
    )


READABLE = [
    # text, tokens and finish reason as sent
    {
        "choices": [_choice({"role": "assistant", "content": "Canberra."}, "length")],
        "usage": {"prompt_tokens": 31, "completion_tokens": 3, "total_tokens": 34},
    },
    # null content is empty text; a missing finish reason is "stop"; no usage is 0 tokens
    {"choices": [_choice({"role": "assistant", "content": None}, None)], "usage": None},
    {"choices": [_choice({"role": "assistant", "content": "x"}, "content_filter")]},
]


@pytest.mark.parametrize("data", READABLE)
def test_reading_a_completion_matches_the_sdk_model(data: dict[str, Any]) -> None:
    assert _completion(data, "http://e/v1", 0.5) == _sdk_reading(data)


def test_reading_by_hand() -> None:
    # the first choice only; tokens from usage; latency passed through
    data = {
        "choices": [
            _choice({"role": "assistant", "content": "A"}, "stop"),
            _choice({"role": "assistant", "content": "B"}, "length"),
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    assert _completion(data, "http://e/v1", 0.25) == RawCompletion(
        text="A", prompt_tokens=5, completion_tokens=1, latency_s=0.25, finish_reason="stop"
    )


@pytest.mark.parametrize("data", [{"choices": []}, {"id": "x"}, "not json", None, {"choices": [3]}])
def test_an_answer_without_choices_is_a_transient_error(data: Any) -> None:
    with pytest.raises(TransientBackendError, match="http://e/v1 answered 200 with a body that"):
        _completion(data, "http://e/v1", 0.0)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# What the SDK's default httpx transport made of each failure: a dropped connection and a refused
# one are connection errors (APIConnectionError), a slow answer is a timeout (APITimeoutError).
FAILURES = [
    ([("disconnect",)], None, True),
    ([("delay", 1.0)], None, False),
    ([], f"http://127.0.0.1:{_closed_port()}/v1", True),
]


@pytest.mark.parametrize(("faults", "base_url", "connection"), FAILURES)
async def test_failures_keep_their_kind_on_the_aiohttp_transport(
    faults: list[Any], base_url: str | None, connection: bool
) -> None:
    async with FakeOpenAIServer(faults=faults) as server:
        backend = OpenAIBackend(base_url=base_url or server.base_url, api_key="k", timeout_s=0.2)
        try:
            with pytest.raises(TransientBackendError) as raised:
                await backend.generate(_request())
        finally:
            await backend.aclose()
    assert raised.value.connection is connection
    assert ("cannot connect" in str(raised.value)) is connection


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reading_the_reasoning_field_and_reasoning_tokens(field: str) -> None:
    data = {
        "choices": [_choice({"role": "assistant", "content": "5", field: "Hm."}, "stop")],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 7,
            "completion_tokens_details": {"reasoning_tokens": 6},
        },
    }
    assert _completion(data, "http://e/v1", 0.1) == RawCompletion(
        text="5",
        prompt_tokens=9,
        completion_tokens=7,
        latency_s=0.1,
        reasoning="Hm.",
        reasoning_tokens=6,
    )


def test_null_reasoning_details_read_as_none() -> None:
    data = {
        "choices": [_choice({"role": "assistant", "content": "5", "reasoning_content": None})],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "completion_tokens_details": None},
    }
    raw = _completion(data, "http://e/v1", 0.0)
    assert (raw.reasoning, raw.reasoning_tokens) == ("", 0)
