"""The room on a recording sim: visibility, memory window, simultaneous rounds, order, probes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from backchannel.backends import Request, build_client, register_sim, unregister_sim
from backchannel.engine import Agent, ConversationContext, ConversationSpec, Event, Item

SIM = "room-recorder"


class Recorder:
    """Answers every request with a unique text and remembers the request."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._counter = itertools.count()

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        return f"said-{next(self._counter)}"

    def prompt_of(self, index: int) -> str:
        return "\n".join(m.content for m in self.requests[index].messages)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    register_sim(SIM, rec)
    yield rec
    unregister_sim(SIM)


def context(seed: int = 1, experiment_seed: int = 5) -> ConversationContext:
    spec = ConversationSpec("c/i/0", "discussion", {}, "", Item("i"), 0, seed)
    client = build_client([f"sim/{SIM}"])
    return ConversationContext(spec, None, client, experiment_seed=experiment_seed)


def agents(*names: str) -> list[Agent]:
    return [Agent(name, "participant", f"sim/{SIM}", system=f"I am {name}.") for name in names]


async def test_audience_message_reaches_only_its_audience(recorder: Recorder) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], opening="Welcome.")
    whisper = await room.speak(a, "Whisper to B.", round=1, turn=0, audience=["B"])
    await room.speak(b, "Speak.", round=1, turn=1)
    await room.speak(c, "Speak.", round=1, turn=2)
    assert whisper.text == "said-0" and whisper.meta["audience"] == ["B"]
    assert whisper.channel == "public"
    assert "said-0" in recorder.prompt_of(1)  # B sees it
    assert "said-0" not in recorder.prompt_of(2)  # C does not
    assert "B: said-1" in recorder.prompt_of(2)
    assert "You: said-0" in room.view("A")  # the speaker sees its own whisper


async def test_window_drops_old_rounds_but_keeps_the_opening(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], memory_rounds=1, order="fixed", opening="Welcome.", preamble="Q?")
    await room.run_round(1, "Speak.")  # said-0 (A), said-1 (B)
    await room.run_round(2, "Speak.")  # said-2 (A), said-3 (B)
    await room.run_round(3, "Speak.")  # said-4 (A), said-5 (B)
    # A's round-2 prompt (request 2): H=1 keeps the one completed round, round 1.
    prompt = recorder.prompt_of(2)
    assert "Moderator: Welcome." in prompt and "Q?" in prompt
    assert "You: said-0" in prompt and "B: said-1" in prompt
    # A's round-3 prompt (request 4): round 2 only; round 1 has left the window.
    prompt = recorder.prompt_of(4)
    assert "You: said-2" in prompt and "B: said-3" in prompt
    assert "said-0" not in prompt and "said-1" not in prompt
    # B's round-3 prompt (request 5): round 2 and A's round-3 message, nothing from round 1.
    prompt = recorder.prompt_of(5)
    assert "A: said-4" in prompt and "A: said-2" in prompt and "said-0" not in prompt
    # The stable parts come first: system, then preamble before the history.
    messages = recorder.requests[3].messages
    assert messages[0].role == "system" and messages[0].content == "I am B."
    assert messages[1].content.index("Q?") < messages[1].content.index("Welcome.")


async def test_own_messages_show_as_you_in_later_prompts(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], order="fixed")
    await room.run_round(1, "Speak.")
    await room.run_round(2, "Speak.")
    assert "You: said-0" in recorder.prompt_of(2)  # A in round 2
    assert "A: said-0" in recorder.prompt_of(3)  # B in round 2
    assert "You: said-1" in recorder.prompt_of(3)


async def test_simultaneous_round_answers_from_the_view_before_the_round(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], order="fixed")
    first = await room.run_round(1, "Speak.", simultaneous=True)
    second = await room.run_round(2, "Speak.", simultaneous=True)
    assert [e.turn for e in first] == [0, 1, 2]
    round_one = {e.text for e in first}
    for index in range(3):  # nobody saw a round-1 message while answering in round 1
        assert not any(text in recorder.prompt_of(index) for text in round_one)
    round_two = {e.text for e in second}
    for index in range(3, 6):  # in round 2 everyone sees all of round 1, none of round 2
        prompt = recorder.prompt_of(index)
        assert all(text in prompt for text in round_one)
        assert not any(text in prompt for text in round_two)
    assert [e.seq for e in ctx.log.events] == list(range(6))


async def test_shuffled_order_is_shared_across_conversations_and_varies_by_round(
    recorder: Recorder,
) -> None:
    names = ("A", "B", "C", "D", "E")
    orders = []
    for seed in (1, 2, 3):  # three conversations of one experiment, different seeds
        room = context(seed=seed).room(agents(*names), order="shuffled")
        orders.append([[x.name for x in room.order(r)] for r in range(1, 7)])
    assert orders[0] == orders[1] == orders[2]
    assert len({tuple(o) for o in orders[0]}) > 1
    # run_round follows room.order: the turn index is the position in that order.
    ctx = context()
    room = ctx.room(agents(*names), order="shuffled")
    events = await room.run_round(3, "Speak.")
    assert [e.agent for e in events] == [x.name for x in room.order(3)]
    assert [e.turn for e in events] == list(range(5))


async def test_probe_is_private_and_never_enters_the_transcript(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], order="fixed", opening="Welcome.")
    tasks = room.checkpoint(0, [a, b], "What do you think, privately?")
    await room.run_round(1, "Speak.")
    probes = [await task for task in tasks]
    await ctx.drain()
    assert {p.channel for p in probes} == {"private"}
    assert [p.turn for p in probes] == [None, None]
    assert [p.round for p in probes] == [0, 0]
    assert all(e.text not in {p.text for p in probes} for e in room.transcript)
    # Sequence numbers follow reservation order: opening, two probes, then the two turns.
    events = ctx.log.events
    assert [(e.seq, e.kind) for e in events] == [
        (0, "message"),
        (1, "probe"),
        (2, "probe"),
        (3, "message"),
        (4, "message"),
    ]
    # Probes run off the critical path; turns are on it.
    critical = {
        r.messages[-1].content.endswith("privately?"): r.critical for r in recorder.requests
    }
    assert critical == {True: False, False: True}


def test_reserved_agent_names_are_refused() -> None:
    for name in ("You", "moderator", ""):
        with pytest.raises(ValueError, match="reserved"):
            Agent(name, "participant", "sim")


async def test_postprocess_reshapes_a_turn_and_shown_sets_what_the_room_reads(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b])

    def keep_length(event: Event) -> None:
        event.value = len(event.text)
        event.meta["seen"] = True

    first = await room.speak(
        a, "Speak.", round=1, turn=0, postprocess=keep_length, shown=lambda e: "SHOWN"
    )
    await room.speak(b, "Speak.", round=1, turn=1)
    assert first.text == "said-0"  # the raw output is kept
    assert first.value == len("said-0") and first.meta["seen"] is True
    assert "A: SHOWN" in recorder.prompt_of(1) and "said-0" not in recorder.prompt_of(1)
    probe = await room.probe(b, "Private?", checkpoint=1, postprocess=keep_length)
    assert probe.value == len(probe.text)
    asked = await ctx.ask(
        f"sim/{SIM}",
        room.prompt(a, "Rate."),
        kind="rating",
        name="r",
        round=1,
        agent="A",
        role="participant",
        postprocess=keep_length,
        seed=42,
    )
    assert asked.value == len(asked.text)
    assert recorder.requests[-1].seed == 42


async def test_a_failing_background_call_leaves_the_others_cancellable(
    recorder: Recorder,
) -> None:
    import asyncio

    ctx = context()
    finished: list[str] = []

    async def boom() -> None:
        raise RuntimeError("a judge bug")

    async def slow() -> None:
        await asyncio.sleep(30)
        finished.append("slow")

    ctx.spawn(boom())
    slow_task = ctx.spawn(slow())
    with pytest.raises(RuntimeError, match="a judge bug"):
        await ctx.drain()
    await ctx.cancel_background()
    assert slow_task.cancelled() and finished == []
