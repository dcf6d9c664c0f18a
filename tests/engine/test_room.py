"""The room on a recording sim: numbering, channels, memory window, rounds, order, probes, and
immutable events."""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Iterator
from dataclasses import FrozenInstanceError, replace

import pytest

from backchannel.backends import (
    Completion,
    GenerationSettings,
    IntRange,
    Request,
    build_client,
    register_sim,
    unregister_sim,
)
from backchannel.engine import (
    Agent,
    ConversationContext,
    ConversationSpec,
    Event,
    EventLog,
    Item,
)

SIM = "room-recorder"


class Recorder:
    """Answers every request with a unique text and remembers the request."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._counter = itertools.count()

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        said = f"said-{next(self._counter)}"
        return "3" if isinstance(request.constraint, IntRange) else said

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


async def test_direct_message_reaches_only_its_recipients_and_is_stored_as_direct(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], opening="Welcome.")
    room.next_round()
    whisper = await room.speak(a, "Whisper to B.", to=["B"])
    await room.speak(b, "Speak.")
    await room.speak(c, "Speak.")
    assert whisper.text == "said-0" and whisper.meta["recipients"] == ["B"]
    assert whisper.channel == "direct" and (whisper.round, whisper.turn) == (1, 0)
    assert "A: said-0" in recorder.prompt_of(1)  # B sees it
    assert "said-0" not in recorder.prompt_of(2)  # C does not
    assert "B: said-1" in recorder.prompt_of(2)
    assert "You: said-0" in room.view("A")  # the sender sees its own message
    # Probes follow the same visibility: C's private view has no trace of it, B's has.
    c_probe, b_probe = room.checkpoint("Private?", agents=[c, b])
    await ctx.drain()
    assert "said-0" not in recorder.prompt_of(3) and "said-0" in recorder.prompt_of(4)
    assert (await c_probe).agent == "C" and (await b_probe).agent == "B"
    assert [e.channel for e in ctx.log.events] == [
        "public",
        "direct",
        "public",
        "public",
        "private",
        "private",
    ]


async def test_direct_messages_name_real_recipients(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b])
    with pytest.raises(ValueError, match=r"\['Z'\], who are not in this room"):
        await room.speak(a, "Psst.", to=["Z"])
    with pytest.raises(ValueError, match="other than its sender"):
        await room.speak(a, "Psst.", to=["A"])
    with pytest.raises(ValueError, match="other than its sender"):
        await room.speak(a, "Psst.", to=[])
    with pytest.raises(TypeError, match="list of agent names"):
        await room.speak(a, "Psst.", to="B")
    assert len(ctx.log) == 0 and recorder.requests == []  # nothing was asked or stored


async def test_window_drops_old_rounds_but_keeps_the_opening(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], memory_rounds=1, order="fixed", opening="Welcome.", preamble="Q?")
    await room.run_round("Speak.")  # said-0 (A), said-1 (B)
    await room.run_round("Speak.")  # said-2 (A), said-3 (B)
    await room.run_round("Speak.")  # said-4 (A), said-5 (B)
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
    await room.run_round("Speak.")
    await room.run_round("Speak.")
    assert "You: said-0" in recorder.prompt_of(2)  # A in round 2
    assert "A: said-0" in recorder.prompt_of(3)  # B in round 2
    assert "You: said-1" in recorder.prompt_of(3)


async def test_simultaneous_round_answers_from_the_view_before_the_round(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], order="fixed")
    first = await room.run_round("Speak.", simultaneous=True)
    second = await room.run_round("Speak.", simultaneous=True)
    assert [(e.round, e.turn) for e in first] == [(1, 0), (1, 1), (1, 2)]
    assert [(e.round, e.turn) for e in second] == [(2, 0), (2, 1), (2, 2)]
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
    for _ in range(3):
        events = await room.run_round("Speak.")
    assert [e.agent for e in events] == [x.name for x in room.order(3)]
    assert {e.round for e in events} == {3}
    assert [e.turn for e in events] == list(range(5))


async def test_probe_is_private_and_never_enters_the_transcript(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], order="fixed", opening="Welcome.")
    tasks = room.checkpoint("What do you think, privately?")
    await room.run_round("Speak.")
    later = room.checkpoint("And now?")
    await room.run_round("Speak.")
    probes = [await task for task in tasks + later]
    await ctx.drain()
    assert {p.channel for p in probes} == {"private"}
    assert [p.turn for p in probes] == [None] * 4
    assert [p.round for p in probes] == [0, 0, 1, 1]  # the checkpoint is the room's round
    answers = {p.text for p in probes}
    assert all(e.text not in answers for e in room.transcript)
    # No prompt asked after a probe was answered carries that answer.
    for index, request in enumerate(recorder.requests):
        prompt = recorder.prompt_of(index)
        assert not any(answer in prompt for answer in answers), request
    # Sequence numbers follow reservation order: opening, two probes, then the two turns.
    events = ctx.log.events
    assert [(e.seq, e.kind) for e in events] == [
        (0, "message"),
        (1, "probe"),
        (2, "probe"),
        (3, "message"),
        (4, "message"),
        (5, "probe"),
        (6, "probe"),
        (7, "message"),
        (8, "message"),
    ]
    # Probes run off the critical path; turns are on it.
    critical = {r.messages[-1].content.endswith("?"): r.critical for r in recorder.requests}
    assert critical == {True: False, False: True}


def test_reserved_agent_names_are_refused() -> None:
    for name in ("You", "moderator", ""):
        with pytest.raises(ValueError, match="reserved"):
            Agent(name, "participant", "sim")


async def test_postprocess_returns_a_reshaped_event_and_shown_sets_what_the_room_reads(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b])
    given: list[Event] = []

    def keep_length(event: Event) -> Event:
        given.append(event)
        return replace(event, value=len(event.text), meta={**event.meta, "seen": True})

    room.next_round()
    first = await room.speak(a, "Speak.", postprocess=keep_length, shown=lambda e: "SHOWN")
    await room.speak(b, "Speak.")
    assert first.text == "said-0"  # the raw output is kept
    assert first.value == len("said-0") and first.meta["seen"] is True
    assert given[0].value is None and "seen" not in given[0].meta  # the filled event is intact
    assert ctx.log.events[0] is first  # the log stores the reshaped event
    assert "A: SHOWN" in recorder.prompt_of(1) and "said-0" not in recorder.prompt_of(1)
    probe = await room.probe(b, "Private?", postprocess=keep_length)
    assert probe.value == len(probe.text) and ctx.log.events[2] is probe
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
    assert asked.value == len(asked.text) and asked.turn is None
    assert recorder.requests[-1].seed == 42


async def test_a_postprocess_cannot_move_an_event(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b])
    with pytest.raises(RuntimeError, match="changed its place"):
        await room.speak(a, "Speak.", postprocess=lambda e: replace(e, turn=5))


def test_events_are_immutable_and_fill_returns_a_new_one() -> None:
    event = Event(0, "message", "turn", 1, 0, "A", "participant", "public", meta={"x": 1})
    with pytest.raises(FrozenInstanceError):
        event.value = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        event.meta["x"] = 2  # type: ignore[index]
    completion = Completion(
        text="hi",
        value="v",
        model="sim",
        status="parse_failure",
        error="bad",
        attempts=2,
        retries=1,
    )
    filled = event.fill(completion)
    assert (filled.text, filled.value, filled.status) == ("hi", "v", "parse_failure")
    assert dict(filled.meta) == {"x": 1, "error": "bad", "attempts": 2, "retries": 1}
    assert event.text == "" and dict(event.meta) == {"x": 1}
    # A copy made elsewhere (a worker process, a replace) has its own read-only meta.
    again = pickle.loads(pickle.dumps(filled))
    assert again == filled and again.meta == filled.meta
    with pytest.raises(TypeError):
        again.meta["x"] = 2  # type: ignore[index]


def test_an_event_names_a_known_channel_and_a_direct_one_its_recipients() -> None:
    with pytest.raises(ValueError, match="channel 'side' is not one of public, direct, private"):
        Event(0, "message", "turn", 1, 0, "A", "p", "side")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs its recipients"):
        Event(0, "message", "turn", 1, 0, "A", "p", "direct")
    assert Event(0, "m", "t", 1, 0, "A", "p", "direct", meta={"recipients": ["B"]}).channel == (
        "direct"
    )


async def test_the_room_numbers_rounds_and_turns(recorder: Recorder) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], opening="Welcome.")
    assert room.round == 0
    late = await room.speak(a, "Add to the opening.")  # round 0, after the moderator's turn 0
    first = await room.run_round("Speak.")
    assert room.next_round() == 2
    extra = [await room.speak(c, "Speak."), await room.speak(a, "Speak.")]
    third = await room.run_round(lambda agent: f"Speak in round {room.round}.")
    assert recorder.requests[-1].messages[-1].content.endswith("Speak in round 3.")
    assert (late.round, late.turn) == (0, 1)
    assert [(e.round, e.turn, e.agent) for e in first] == [(1, 0, "A"), (1, 1, "B"), (1, 2, "C")]
    assert [(e.round, e.turn, e.agent) for e in extra] == [(2, 0, "C"), (2, 1, "A")]
    assert {e.round for e in third} == {3}
    keys = [(e.round, e.turn, e.agent) for e in ctx.log.events]
    assert len(set(keys)) == len(keys)


def test_the_log_refuses_a_second_event_for_the_same_turn() -> None:
    log = EventLog()
    place = {"kind": "message", "name": "turn", "round": 1, "role": "p", "channel": "public"}
    log.reserve(turn=0, agent="A", **place)  # type: ignore[arg-type]
    log.reserve(turn=0, agent="B", **place)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="round 1, turn 0 of A is already in the log"):
        log.reserve(turn=0, agent="A", **place)  # type: ignore[arg-type]
    # Probes have no turn: several at one checkpoint are fine.
    probe = {**place, "kind": "probe", "channel": "private"}
    log.reserve(turn=None, agent="A", **probe)  # type: ignore[arg-type]
    log.reserve(turn=None, agent="A", **probe)  # type: ignore[arg-type]
    assert len(log) == 4


async def test_two_rooms_cannot_store_the_same_turn_of_one_agent(recorder: Recorder) -> None:
    ctx = context()
    (a,) = agents("A")
    await ctx.room([a]).run_round("Speak.")
    with pytest.raises(RuntimeError, match="already in the log"):
        await ctx.room([a]).run_round("Speak.")


@pytest.mark.parametrize("simultaneous", [False, True])
async def test_a_round_can_be_run_by_a_subset_in_the_round_order(
    recorder: Recorder, simultaneous: bool
) -> None:
    names = ("A", "B", "C", "D", "E")
    ctx = context()
    seats = agents(*names)
    room = ctx.room(seats, order="shuffled")
    subset = [seats[4], seats[1], seats[2]]
    events = await room.run_round("Speak.", agents=subset, simultaneous=simultaneous)
    in_order = [x.name for x in room.order(1) if x.name in {"E", "B", "C"}]
    assert [e.agent for e in events] == in_order
    assert [(e.round, e.turn) for e in events] == [(1, 0), (1, 1), (1, 2)]
    assert len(recorder.requests) == 3
    with pytest.raises(ValueError, match="distinct, and at least one"):
        await room.run_round("Speak.", agents=[])
    with pytest.raises(ValueError, match="not in this room"):
        await room.run_round("Speak.", agents=agents("Z"))


async def test_a_checkpoint_takes_every_probe_option(recorder: Recorder) -> None:
    """What the dyad needs: rating kind and constraint, its own settings, the full record."""
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], memory_rounds=1)
    for _ in range(3):
        await room.run_round("Speak.")  # said-0 .. said-5
    settings = GenerationSettings(temperature=0.0, max_tokens=7)
    tasks = room.checkpoint(
        lambda agent: f"Rate it, {agent.name}.",
        name="self_rating",
        kind="rating",
        constraint=IntRange(0, 6),
        settings=settings,
        full_history=True,
        meta={"scale": "0-6"},
        postprocess=lambda e: replace(e, meta={**e.meta, "checked": True}),
    )
    ratings = [await task for task in tasks]
    windowed = room.checkpoint("Windowed?", agents=[a])
    await ctx.drain()
    assert [(r.kind, r.name, r.round, r.agent) for r in ratings] == [
        ("rating", "self_rating", 3, "A"),
        ("rating", "self_rating", 3, "B"),
    ]
    # besides the prompt and retries of each call (stored for readers), meta is what it gave
    assert all(
        {**r.meta, "prompt": None}
        == {"scale": "0-6", "checked": True, "prompt": None, "retries": 0}
        for r in ratings
    )
    assert all(r.meta["prompt"][-1][0] == "user" for r in ratings)
    rating_requests = recorder.requests[6:8]
    assert all(r.settings == settings for r in rating_requests)
    assert all(isinstance(r.constraint, IntRange) for r in rating_requests)
    assert "Rate it, B." in recorder.prompt_of(7)
    assert "said-0" in recorder.prompt_of(6)  # the full record, past the one-round window
    assert "said-0" not in recorder.prompt_of(8)  # without full_history the window applies
    assert (await windowed[0]).round == 3


async def test_an_agent_outside_the_room_cannot_speak_or_be_probed(recorder: Recorder) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a])
    with pytest.raises(ValueError, match="'B' is not in this room"):
        await room.speak(b, "Speak.")
    with pytest.raises(ValueError, match="'B' is not in this room"):
        room.probe(b, "Private?")


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


async def test_a_scripted_post_is_a_turn_without_a_model_call(recorder: Recorder) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c])
    room.next_round()
    note = room.post(a, "stored text", to=["B"], name="testimony", meta={"k": 1}, shown="SEEN")
    public = room.post(c, "for all")
    spoken = await room.speak(b, "Speak.")
    assert len(recorder.requests) == 1  # only the spoken turn called a model
    assert (note.channel, note.text, note.model, note.status) == ("direct", "stored text", "", "ok")
    assert dict(note.meta) == {"k": 1, "recipients": ["B"]}
    assert (public.channel, public.turn, spoken.turn) == ("public", 1, 2)
    prompt = recorder.prompt_of(0)  # B's turn sees the shown text of A's post, and C's post
    assert "A: SEEN" in prompt and "stored text" not in prompt and "C: for all" in prompt
    assert "SEEN" not in room.view("C")


async def test_an_agents_prompts_extend_each_other_so_a_server_can_reuse_their_prefix(
    recorder: Recorder,
) -> None:
    # Stable parts first, the instruction last: each of an agent's prompts begins with everything
    # but the instruction of the one before (turn r -> probe after r -> turn r + 1).
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], order="fixed", opening="Welcome.", preamble="The question: Q?")
    await room.run_round("Turn instruction.")
    await room.probe(a, "Probe question.")
    await room.run_round("Turn instruction.")
    turn_1, _, probe_1, turn_2, _ = recorder.requests
    assert turn_1.messages[0] == probe_1.messages[0] == turn_2.messages[0]  # the system message
    stems = []
    for request, instruction in [
        (turn_1, "Turn instruction."),
        (probe_1, "Probe question."),
        (turn_2, "Turn instruction."),
    ]:
        user = request.messages[1].content
        assert user.endswith("\n\n" + instruction)
        stems.append(user.removesuffix(instruction))
    assert probe_1.messages[1].content.startswith(stems[0])
    assert turn_2.messages[1].content.startswith(stems[1])
    assert len(stems[0]) < len(stems[1])  # the probe adds the rest of round 1
    assert stems[1] == stems[2]  # the first speaker of round 2 saw what its probe saw
