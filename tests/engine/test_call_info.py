"""Every request a conversation makes says what it is (its call information): the prompt's name,
who asks in which role and round, the item, the facts the paradigm attached and what the agent
saw; none of it changes a prompt or a cache key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from backchannel.backends import (
    Request,
    Seen,
    build_client,
    cache_key,
    register_sim,
    unregister_sim,
)
from backchannel.engine import Agent, ConversationContext, ConversationSpec, Item

SIM = "call-recorder"


@pytest.fixture
def requests() -> Iterator[list[Request]]:
    asked: list[Request] = []

    def answer(request: Request) -> str:
        asked.append(request)
        return f"said-{len(asked)}"

    register_sim(SIM, answer)
    yield asked
    unregister_sim(SIM)


def _context() -> ConversationContext:
    item = Item("q1", {"question": "Why?", "true_answer": "Because."})
    spec = ConversationSpec("c/q1/0", "my_paradigm", {}, "", item, 0, 7)
    return ConversationContext(spec, None, build_client([f"sim/{SIM}"]), experiment_seed=1)


async def test_turns_probes_and_asks_carry_their_call_information(
    requests: list[Request],
) -> None:
    ctx = _context()
    ann = Agent("Ann", "speaker", f"sim/{SIM}", system="I am Ann.", facts={"stance": "yes"})
    bob = Agent("Bob", "listener", f"sim/{SIM}", system="I am Bob.")
    room = ctx.room([ann, bob], opening="Welcome.")
    await room.run_round("Speak.", facts={"topic": "t"})
    room.checkpoint("Privately?", name="vote", self_name="Anon")
    await ctx.drain()
    await ctx.ask(f"sim/{SIM}", room.prompt(bob, "Alone?"), kind="score", name="alone",
                  round=1, agent="Bob", role="listener", facts={"extra": 1})  # fmt: skip
    first, second, *probes, alone = requests
    for request in requests:
        call = request.call
        assert call is not None and call.source == "paradigm" and call.paradigm == "my_paradigm"
        assert call.item_id == "q1" and call.item == {"question": "Why?", "true_answer": "Because."}
    assert (first.call.prompt, first.call.agent, first.call.role, first.call.round) == (
        "turn", "Ann", "speaker", 1,
    )  # fmt: skip
    # The agent's own facts with the call's on top; Bob has only the call's.
    assert first.call.facts == {"stance": "yes", "topic": "t"}
    assert second.call.facts == {"topic": "t"}
    # What Bob saw when he spoke: the opening and Ann's turn, as his prompt shows them.
    assert second.call.seen == (
        Seen("Moderator", "Welcome.", 0, 0),
        Seen("Ann", "said-1", 1, 0),
    )
    # A probe's view names the agent's own messages as the prompt does (here anonymised).
    by_agent = {r.call.agent: r.call for r in probes}
    assert by_agent["Ann"].prompt == "vote" and by_agent["Ann"].round == 1
    assert Seen("Anon", "said-1", 1, 0, own=True) in by_agent["Ann"].seen
    assert Seen("Ann", "said-1", 1, 0, own=False) in by_agent["Bob"].seen
    assert (alone.call.prompt, alone.call.facts, alone.call.seen) == ("alone", {"extra": 1}, ())


async def test_simultaneous_rounds_and_single_turns_carry_it_too(requests: list[Request]) -> None:
    ctx = _context()
    ann = Agent("Ann", "speaker", f"sim/{SIM}", facts={"side": "a"})
    bob = Agent("Bob", "speaker", f"sim/{SIM}", facts={"side": "b"})
    room = ctx.room([ann, bob])
    await room.run_round("Speak.", simultaneous=True, name="position")
    room.next_round()
    await room.speak(bob, "Again.", name="reply", facts={"side": "c"})
    await asyncio.sleep(0)
    calls = [r.call for r in requests]
    assert [(c.prompt, c.agent, c.facts["side"], c.round) for c in calls if c] == [
        ("position", "Ann", "a", 1),
        ("position", "Bob", "b", 1),
        ("reply", "Bob", "c", 2),
    ]
    assert calls[2] is not None and [s.own for s in calls[2].seen] == [False, True]


async def test_the_call_information_changes_no_prompt_and_no_cache_key(
    requests: list[Request],
) -> None:
    ctx = _context()
    with_facts = Agent("Ann", "speaker", f"sim/{SIM}", system="I am Ann.", facts={"secret": 42})
    await ctx.room([with_facts]).run_round("Speak.")
    plain_ctx = _context()
    await plain_ctx.room([Agent("Ann", "speaker", f"sim/{SIM}", system="I am Ann.")]).run_round(
        "Speak."
    )
    informed, plain = requests
    assert informed.messages == plain.messages and "42" not in str(informed.messages)
    assert cache_key(informed, "sim") == cache_key(plain, "sim")
