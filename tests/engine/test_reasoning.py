"""Reasoning in a room: each agent's reasoning is stored with its event and never enters another
agent's prompt; an agent recalls its own only when allowed. Checked on the prompts the fake
server received, in every shape a server sends reasoning in."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from backchannel.backends import (
    EndpointSettings,
    GenerationSettings,
    IntRange,
    ModelSettings,
    ThinkTags,
    build_client,
)
from backchannel.engine import Agent, ConversationContext, ConversationSpec, Item
from backchannel.testing import REASONING_SHAPES, FakeOpenAIServer

MODEL = "openai/fake-model"
SETTINGS = GenerationSettings(max_tokens=64)


class Script:
    """Answer N and reasoning N for the N-th request, so each text names its call."""

    def __init__(self) -> None:
        self._answers = itertools.count()
        self._thoughts = itertools.count()

    def answer(self, body: dict[str, Any]) -> str:
        last = body["messages"][-1]["content"]
        number = next(self._answers)
        return "4" if "whole number" in last else f"answer-{number} Canberra"

    def thought(self, body: dict[str, Any]) -> str:
        return f"secret-thought-{next(self._thoughts)}"


def _context(server: FakeOpenAIServer, rule: ModelSettings) -> ConversationContext:
    client = build_client(
        [MODEL],
        endpoints=[EndpointSettings(base_url=server.base_url, api_key="k")],
        model_settings=[rule],
    )
    spec = ConversationSpec("c/i/0", "discussion", {}, "", Item("i"), 0, 3)
    return ConversationContext(spec, None, client, experiment_seed=1)


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])


@pytest.mark.parametrize("shape", REASONING_SHAPES)
async def test_reasoning_is_stored_and_never_reaches_another_agent(shape: str) -> None:
    script = Script()
    async with FakeOpenAIServer(
        responder=script.answer,
        reasoning=shape,  # type: ignore[arg-type]
        reasoner=script.thought,
    ) as server:
        tags = ThinkTags(opened_by_template=shape == "opened_by_template")
        ctx = _context(server, ModelSettings(think_tags=tags))
        alice, bob = (Agent(n, "participant", MODEL, settings=SETTINGS) for n in ("Alice", "Bob"))
        room = ctx.room([alice, bob], opening="Capital of Australia?")
        try:
            room.next_round()
            first = await room.speak(alice, "Speak.")
            second = await room.speak(bob, "Speak.")
            rating = await room.probe(bob, "Rate, as a whole number.", constraint=IntRange(1, 7))
            room.next_round()
            await room.speak(alice, "Speak.")
        finally:
            await ctx.client.aclose()
    # the stored events: the answer as text, the reasoning beside it
    assert (first.text, first.reasoning, first.status) == (
        "answer-0 Canberra",
        "secret-thought-0",
        "ok",
    )
    assert (second.text, second.reasoning) == ("answer-1 Canberra", "secret-thought-1")
    assert (rating.value, rating.reasoning, rating.text) == (4, "secret-thought-2", "4")
    # one reasoning word, reported by servers with a reasoning field only
    assert first.reasoning_tokens == (1 if shape in ("reasoning_content", "reasoning") else 0)
    # the prompts sent: answers travel, reasoning does not (not even the agent's own)
    prompts = [_prompt(body) for body in server.requests]
    assert "Alice: answer-0 Canberra" in prompts[1]
    assert "Alice: answer-0 Canberra" in prompts[2] and "You: answer-1 Canberra" in prompts[2]
    assert "Bob: answer-1 Canberra" in prompts[3] and "You: answer-0 Canberra" in prompts[3]
    assert not any("secret-thought" in prompt or "<think>" in prompt for prompt in prompts)
    assert [m.text for m in room.transcript] == [
        "Capital of Australia?",
        "answer-0 Canberra",
        "answer-1 Canberra",
        "answer-3 Canberra",
    ]


@pytest.mark.parametrize(
    ("agent_setting", "model_setting", "recalls"),
    [
        (None, False, False),  # the default: no
        (None, True, True),  # the model's setting
        (False, True, False),  # the agent's own setting wins
        (True, False, True),
    ],
)
async def test_an_agent_recalls_only_its_own_reasoning_when_allowed(
    agent_setting: bool | None, model_setting: bool, recalls: bool
) -> None:
    script = Script()
    async with FakeOpenAIServer(
        responder=script.answer, reasoning="reasoning_content", reasoner=script.thought
    ) as server:
        ctx = _context(server, ModelSettings(own_reasoning=model_setting))
        alice = Agent("Alice", "p", MODEL, settings=SETTINGS, own_reasoning=agent_setting)
        bob = Agent("Bob", "p", MODEL, settings=SETTINGS)
        room = ctx.room([alice, bob])
        try:
            await room.run_round("Speak.")
            await room.run_round("Speak.")
        finally:
            await ctx.client.aclose()
    alice_later, bob_later = _prompt(server.requests[2]), _prompt(server.requests[3])
    own = "You (private reasoning): secret-thought-0\n\nYou: answer-0 Canberra"
    assert (own in alice_later) is recalls
    # never anyone else's: Bob sees Alice's answer only, Alice never sees Bob's reasoning
    assert "secret-thought-0" not in bob_later and "secret-thought-1" not in alice_later
    assert "Alice: answer-0 Canberra" in bob_later


async def test_an_anonymised_view_never_shows_own_reasoning() -> None:
    """Under another self-name the reasoning beside some messages would tell which were its own."""
    script = Script()
    async with FakeOpenAIServer(
        responder=script.answer, reasoning="reasoning_content", reasoner=script.thought
    ) as server:
        ctx = _context(server, ModelSettings(own_reasoning=True))
        alice = Agent("Alice", "p", MODEL, settings=SETTINGS)
        room = ctx.room([alice, Agent("Bob", "p", MODEL, settings=SETTINGS)])
        try:
            await room.run_round("Speak.")
            await room.probe(alice, "Who was right?", self_name="Participant 3")
            await room.probe(alice, "Your answer?")
        finally:
            await ctx.client.aclose()
    anonymised, own = _prompt(server.requests[2]), _prompt(server.requests[3])
    assert "Participant 3: answer-0 Canberra" in anonymised
    assert "secret-thought" not in anonymised
    assert "You (private reasoning): secret-thought-0" in own
