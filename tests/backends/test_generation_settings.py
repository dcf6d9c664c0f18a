"""Reasoning effort, stop sequences and extra body fields: validated, merged under a call in one
order (endpoint, model, call), sent to the server and part of the cache key."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from backchannel.backends import (
    EndpointSettings,
    GenerationSettings,
    Message,
    ModelSettings,
    Request,
    ResponseCache,
    build_client,
    cache_key,
)
from backchannel.testing import FakeOpenAIServer

MODEL = "openai/fake-model"
MESSAGES = (Message("user", "Capital of Australia?"),)


def _request(settings: GenerationSettings) -> Request:
    return Request(MODEL, MESSAGES, settings, seed=7)


def test_a_key_without_the_new_settings_is_the_key_caches_were_written_with() -> None:
    """The payload as it was before these settings existed, written out by hand."""
    payload = {
        "model": MODEL,
        "endpoint": "http://e/v1",
        "messages": [["user", "Capital of Australia?"]],
        "temperature": 0.7,
        "top_p": 1.0,
        "max_tokens": 256,
        "seed": 7,
        "constraint": "",
        "replicate": 0,
        "attempt": 0,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert cache_key(_request(GenerationSettings()), "http://e/v1") == expected


@pytest.mark.parametrize(
    "changed",
    [
        {"reasoning_effort": "low"},
        {"reasoning_effort": "high"},
        {"stop": ("\n\n",)},
        {"stop": ("###",)},
        {"extra_body": {"min_p": 0.05}},
        {"extra_body": {"min_p": 0.1}},
        {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}},
        {"max_tokens_field": "max_completion_tokens"},
        {"sampling": False},
    ],
)
def test_each_setting_changes_the_cache_key(changed: dict[str, Any]) -> None:
    base = cache_key(_request(GenerationSettings()), "e")
    assert cache_key(_request(GenerationSettings(**changed)), "e") != base


def test_the_key_does_not_depend_on_the_order_of_extra_body_keys() -> None:
    one = GenerationSettings(extra_body={"a": 1, "b": 2})
    two = GenerationSettings(extra_body={"b": 2, "a": 1})
    assert cache_key(_request(one), "e") == cache_key(_request(two), "e")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort must be one of"),
        ({"stop": "###"}, "a list of stop sequences"),
        ({"stop": ("",)}, "non-empty strings"),
        ({"extra_body": {"max_tokens": 5}}, "may not set 'max_tokens'"),
        ({"extra_body": {"max_completion_tokens": 5}}, "may not set 'max_completion_tokens'"),
        ({"max_tokens_field": "n_predict"}, "max_tokens_field must be one of"),
        ({"extra_body": {"model": "x"}}, "may not set 'model'"),
        ({"extra_body": {"x": object()}}, "only JSON values"),
        ({"extra_body": {"x": float("nan")}}, "only JSON values"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GenerationSettings(**options)


def test_settings_stay_hashable_and_compare_by_value() -> None:
    one = GenerationSettings(stop=["a"], extra_body={"k": [1]})  # type: ignore[arg-type]
    two = GenerationSettings(stop=("a",), extra_body={"k": [1]})
    assert one == two and hash(one) == hash(two)
    assert one.stop == ("a",)


def test_a_call_s_own_settings_win_over_the_model_s_and_bodies_merge_key_by_key() -> None:
    defaults = ModelSettings(
        reasoning_effort="high", stop=("END",), extra_body={"min_p": 0.1, "top_k": 20}
    )
    call = GenerationSettings(reasoning_effort="low", extra_body={"min_p": 0.2})
    merged = defaults.apply(_request(call)).settings
    assert merged.reasoning_effort == "low"
    assert merged.stop == ("END",)
    assert merged.extra_body == {"min_p": 0.2, "top_k": 20}
    # a model without sampling settings gets none, whatever the call asks
    hosted = ModelSettings(max_tokens_field="max_completion_tokens", sampling=False)
    sent = hosted.apply(_request(GenerationSettings(temperature=0.0))).settings
    assert (sent.max_tokens_field, sent.sampling, sent.temperature) == (
        "max_completion_tokens",
        False,
        0.0,
    )
    # nothing to add: the very same request comes back
    plain = _request(GenerationSettings())
    assert ModelSettings().apply(plain) is plain


async def test_endpoint_model_and_call_settings_reach_the_server_and_the_cache_key(
    tmp_path: Any,
) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    async with FakeOpenAIServer(responder=lambda body: "Canberra") as server:
        endpoint = EndpointSettings(
            base_url=server.base_url, extra_body={"repetition_penalty": 1.05, "min_p": 0.0}
        )

        def client_with(rule: ModelSettings) -> Any:
            return build_client([MODEL], endpoints=[endpoint], cache=cache, model_settings=[rule])

        rule = ModelSettings(
            models="openai/fake-*",
            reasoning_effort="medium",
            stop=("\nUser:",),
            extra_body={"min_p": 0.05, "chat_template_kwargs": {"enable_thinking": True}},
        )
        client = client_with(rule)
        call = GenerationSettings(max_tokens=32, extra_body={"top_k": 20})
        try:
            await client.generate(_request(call))
            again = await client.generate(_request(call))
        finally:
            await client.aclose()
        # another model default is another cache entry, hence another call
        other = client_with(ModelSettings(reasoning_effort="low"))
        try:
            await other.generate(_request(call))
        finally:
            await other.aclose()
    first, third = server.requests
    assert again.cached
    assert first["reasoning_effort"] == "medium"
    assert first["stop"] == ["\nUser:"]
    assert first["repetition_penalty"] == 1.05
    assert first["min_p"] == 0.05
    assert first["chat_template_kwargs"] == {"enable_thinking": True}
    assert first["top_k"] == 20
    assert (third["reasoning_effort"], third["min_p"], "stop" in third) == ("low", 0.0, False)
    cache.close()


async def test_unset_settings_are_not_sent() -> None:
    async with FakeOpenAIServer(responder=lambda body: "Canberra") as server:
        client = build_client([MODEL], endpoints=[EndpointSettings(base_url=server.base_url)])
        try:
            await client.generate(_request(GenerationSettings()))
        finally:
            await client.aclose()
    (body,) = server.requests
    assert not {"reasoning_effort", "stop"} & set(body)


async def test_a_server_that_rejects_a_field_is_an_error_event_not_a_crash() -> None:
    # a 400, as vLLM answers a field it does not know
    async with FakeOpenAIServer(faults=[("status", 400)]) as server:
        client = build_client([MODEL], endpoints=[EndpointSettings(base_url=server.base_url)])
        try:
            completion = await client.generate(_request(GenerationSettings(reasoning_effort="low")))
        finally:
            await client.aclose()
    assert completion.status == "error"
    assert completion.error is not None and "rejected the request" in completion.error
