"""The off-the-record probe: after each public turn the speaker is asked privately, at the
turn's round, its answer tied to the turn by `turn_seq` and never shown to anyone."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import pytest

from backchannel.backends import IntRange, Request, build_client, register_sim, unregister_sim
from backchannel.engine import (
    OFF_THE_RECORD,
    TURN_SEQ,
    Agent,
    ConversationContext,
    ConversationSpec,
    Event,
    Item,
    OffTheRecord,
)

SIM = "off-record"


class Recorder:
    """A unique text per answer ("3" for a rating); remembers every request."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._counter = itertools.count()

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        return "3" if isinstance(request.constraint, IntRange) else f"said-{next(self._counter)}"


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    register_sim(SIM, rec)
    yield rec
    unregister_sim(SIM)


def context() -> ConversationContext:
    spec = ConversationSpec("c/i/0", "discussion", {}, "", Item("i"), 0, 1)
    return ConversationContext(spec, None, build_client([f"sim/{SIM}"]), experiment_seed=5)


def agents(*names: str) -> list[Agent]:
    return [Agent(name, "participant", f"sim/{SIM}", system=f"I am {name}.") for name in names]


def _by_kind(events: tuple[Event, ...] | list[Event]) -> tuple[list[Event], list[Event]]:
    turns = [e for e in events if e.kind == "message" and e.channel == "public"]
    probes = [e for e in events if e.name == OFF_THE_RECORD]
    return turns, probes


async def test_each_public_turn_is_followed_by_a_private_probe_of_its_speaker(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b, c = agents("A", "B", "C")
    room = ctx.room([a, b, c], memory_rounds=None, order="fixed", opening=None, preamble="")
    asked: list[asyncio.Task[Event]] = []
    record = OffTheRecord(
        "Off the record?",
        constraint=IntRange(0, 6),
        agents=frozenset({"A", "B"}),
        asked=asked.append,
    )
    await room.run_round("Speak.", off_the_record=record)
    await room.run_round("Speak.", off_the_record=record)
    await ctx.drain()
    turns, probes = _by_kind(ctx.log.events)
    assert len(turns) == 6 and len(probes) == 4 and len(asked) == 4  # C is not asked
    by_seq = {t.seq: t for t in turns}
    for probe in probes:
        turn = by_seq[probe.meta[TURN_SEQ]]
        assert (probe.agent, probe.round, probe.kind) == (turn.agent, turn.round, "probe")
        assert probe.channel == "private" and probe.turn is None and probe.value == 3
        assert probe.seq == turn.seq + 1  # reserved right after the turn, before the next one
    # The speaker is asked once its own turn is in its view, before the next speaker's.
    probe_requests = [r for r in recorder.requests if "Off the record?" in r.messages[-1].content]
    first = probe_requests[0].messages[-1].content
    assert "said-0" in first and "said-1" not in first  # A's own turn, not yet B's
    assert not any(r.critical for r in probe_requests)
    # Nothing private ever reaches the room or a prompt.
    answers = {p.text for p in probes}
    prompts = "\n".join(m.content for r in recorder.requests for m in r.messages)
    assert not any(answer in prompts for answer in answers if answer != "3")
    assert all(e.text not in answers for e in room.transcript)


async def test_a_simultaneous_round_is_probed_after_it_and_direct_turns_are_not(
    recorder: Recorder,
) -> None:
    ctx = context()
    a, b = agents("A", "B")
    room = ctx.room([a, b], memory_rounds=None, order="fixed", opening=None, preamble="")
    record = OffTheRecord("Off the record?")
    events = await room.run_round("Speak.", simultaneous=True, off_the_record=record)
    room.next_round()
    await room.speak(a, "Tell B.", to=["B"], off_the_record=record)
    await ctx.drain()
    _, probes = _by_kind(ctx.log.events)
    assert [p.meta[TURN_SEQ] for p in probes] == [e.seq for e in events]
    assert [p.round for p in probes] == [1, 1]
    # Each probe of the simultaneous round sees the whole round.
    for request in recorder.requests[2:4]:
        prompt = "\n".join(m.content for m in request.messages)
        assert events[0].text in prompt and events[1].text in prompt
