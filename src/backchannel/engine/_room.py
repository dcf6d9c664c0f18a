"""The room: agents, rounds, speaking order, memory window, visibility and private probes.

The engine owns this bookkeeping; a paradigm only says what is asked in a turn and at a checkpoint.
The room numbers rounds and turns itself, so no two events can claim the same turn. Prompts put
stable parts first (system, persona, preamble) and the changing history after, which suits the
prefix caches of llama.cpp, vLLM and SGLang servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from backchannel.backends import (
    GenerationSettings,
    Message,
    OutputConstraint,
    Request,
    Seen,
)
from backchannel.engine._agent import Agent
from backchannel.engine._events import RECIPIENTS, Event, Postprocess
from backchannel.engine._memory import MODERATOR, Entry, render_view, visible_entries
from backchannel.engine._order import OrderPolicy, speaking_order

if TYPE_CHECKING:
    from backchannel.engine._conversation import ConversationContext

PROBE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=128)
InstructionFor = Callable[[Agent], str] | str
Shown = Callable[[Event], str]
"""The text of a turn that enters the room, when it is not the raw model output."""
Facts = Mapping[str, Any] | None
"""Facts a call carries in its call information (for a simulated population), beside the
agent's own `Agent.facts`; no prompt shows them."""
OFF_THE_RECORD = "off_the_record"
"""The name of the private probe asked of a speaker right after its public turn."""
TURN_SEQ = "turn_seq"
"""The meta key of an off-the-record answer: the `seq` of the public turn it follows."""


@dataclass(frozen=True)
class OffTheRecord:
    """What each speaker is asked privately right after its public turn (the dual-channel
    design): a probe named `off_the_record` whose answer never enters the room.

    `question` (text, or a function of the agent), `constraint`, `settings`, `postprocess` and
    `facts` are those of `Room.probe`; `agents` names the speakers asked (None: every speaker);
    `asked(task)` is called with each probe's task (e.g. to judge the answer when it arrives).
    """

    question: InstructionFor
    constraint: OutputConstraint | None = None
    settings: GenerationSettings = PROBE_SETTINGS
    postprocess: Postprocess | None = None
    facts: Facts = None
    full_history: bool = False
    agents: frozenset[str] | None = None
    asked: Callable[[asyncio.Task[Event]], None] | None = None


class Room:
    """A group of agents talking in rounds; see `ConversationContext.room`.

    Round 0 is the opening round (the moderator's opening, if any, is its turn 0); `run_round`
    and `next_round` begin rounds 1, 2, ...; `speak` (or `post`, for a scripted message) is the
    next turn of the round in progress; a probe's checkpoint is the round in progress (asked
    after round r: checkpoint r).
    """

    def __init__(
        self,
        context: ConversationContext,
        agents: Sequence[Agent],
        *,
        memory_rounds: int | None,
        order: OrderPolicy,
        opening: str | None,
        preamble: str,
        hears: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        """`hears` maps each agent to the agents it hears (a topology); None: everyone."""
        names = [a.name for a in agents]
        if len(set(names)) != len(names):
            raise ValueError(f"agent names must be distinct: {names}")
        if memory_rounds is not None and memory_rounds < 1:
            raise ValueError("memory_rounds must be at least 1 (or None for everything)")
        self.context = context
        self.agents = list(agents)
        self.memory_rounds = memory_rounds
        self.order_policy: OrderPolicy = order
        self.preamble = preamble
        self.hears = None if hears is None else dict(hears)
        self._transcript: list[Entry] = []
        self._round = 0
        self._turns = 0  # turns taken so far in the round in progress
        if opening is not None:
            turn = self._next_turn()
            self._transcript.append(Entry(0, turn, MODERATOR, opening))
            log = context.log
            event = log.reserve(
                kind="message",
                name="opening",
                round=0,
                turn=turn,
                agent="moderator",
                role="moderator",
                channel="public",
            )
            log.complete(replace(event, text=opening))

    @property
    def round(self) -> int:
        """The round in progress: 0 (the opening round) until the first `run_round`."""
        return self._round

    @property
    def transcript(self) -> tuple[Entry, ...]:
        """Every message that entered the room so far (public and direct), in order."""
        return tuple(self._transcript)

    def announce(self, text: str, *, name: str = "moderator") -> Event:
        """A moderator message as the next turn of the round in progress; everyone hears it."""
        turn = self._next_turn()
        self._transcript.append(Entry(self._round, turn, MODERATOR, text))
        log = self.context.log
        event = log.reserve(
            kind="message",
            name=name,
            round=self._round,
            turn=turn,
            agent="moderator",
            role="moderator",
            channel="public",
        )
        return log.complete(replace(event, text=text))

    def agent(self, name: str) -> Agent:
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def order(self, round_number: int) -> list[Agent]:
        return speaking_order(
            self.agents, round_number, self.order_policy, self.context.experiment_seed
        )

    def next_round(self) -> int:
        """Begin the next round (for paradigms that call `speak` themselves); its number."""
        self._round += 1
        self._turns = 0
        return self._round

    def view(
        self,
        viewer: str,
        *,
        self_name: str = "You",
        full_history: bool = False,
        completed_rounds: int | None = None,
    ) -> str:
        """What `viewer` remembers once `completed_rounds` are over (default: the round in
        progress), as text."""
        entries = self._visible(viewer, full_history, completed_rounds)
        return self._render(entries, viewer, self_name)

    def _visible(
        self, viewer: str, full_history: bool, completed_rounds: int | None
    ) -> list[Entry]:
        return visible_entries(
            self._transcript,
            viewer,
            self._round if completed_rounds is None else completed_rounds,
            None if full_history else self.memory_rounds,
            None if self.hears is None else self.hears.get(viewer, frozenset()),
        )

    def _render(self, entries: list[Entry], viewer: str, self_name: str) -> str:
        # Under another name (an anonymised re-ask) the reasoning would tell which were its own.
        recall = self_name == "You" and self._own_reasoning(viewer)
        return render_view(entries, viewer, self_name, recall)

    def _own_reasoning(self, name: str) -> bool:
        """Whether `name` recalls its own reasoning: the agent's setting, else its model's."""
        agent = next((a for a in self.agents if a.name == name), None)
        if agent is None:
            return False
        if agent.own_reasoning is not None:
            return agent.own_reasoning
        return self.context.client.own_reasoning(agent.model)

    def prompt(
        self,
        agent: Agent,
        instruction: str,
        *,
        self_name: str = "You",
        full_history: bool = False,
        completed_rounds: int | None = None,
    ) -> list[Message]:
        """System and persona, then the preamble, the agent's memory view and the instruction.

        `completed_rounds` sets the memory window (see `visible_entries`): a turn of round r
        uses r - 1, a probe at checkpoint c uses c; the default is the round in progress.
        """
        return self._prompt(agent, instruction, self_name, full_history, completed_rounds)[0]

    def _prompt(
        self,
        agent: Agent,
        instruction: str,
        self_name: str = "You",
        full_history: bool = False,
        completed_rounds: int | None = None,
    ) -> tuple[list[Message], tuple[Seen, ...]]:
        """The prompt, and the memory view it shows as call information (`Seen`)."""
        messages = []
        system = "\n\n".join(part for part in (agent.system, agent.persona) if part)
        if system:
            messages.append(Message("system", system))
        entries = self._visible(agent.name, full_history, completed_rounds)
        history = self._render(entries, agent.name, self_name)
        parts = [self.preamble] if self.preamble else []
        if history:
            parts.append("Conversation so far:\n\n" + history)
        parts.append(instruction)
        messages.append(Message("user", "\n\n".join(parts)))
        seen = tuple(
            Seen(
                self_name if e.speaker == agent.name else e.speaker,
                e.text,
                e.round,
                e.turn,
                e.speaker == agent.name,
            )
            for e in entries
        )
        return messages, seen

    async def speak(
        self,
        agent: Agent,
        instruction: str,
        *,
        to: Iterable[str] | None = None,
        constraint: OutputConstraint | None = None,
        name: str = "turn",
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
        shown: Shown | None = None,
        facts: Facts = None,
        off_the_record: OffTheRecord | None = None,
    ) -> Event:
        """The next turn of the round in progress: the agent answers from its view.

        The answer enters the room: public, or with `to=[names]` a direct message that only
        those agents (and the speaker) see, stored on channel `direct` with
        `meta["recipients"]`. `postprocess(event)` returns the event reshaped (value, meta)
        before anything else sees it; `shown(event)` is the text that enters the room (default:
        the raw text); `facts` go into the call information only. With `off_the_record`, a
        public turn is followed by that private probe of its speaker (see `OffTheRecord`).
        Returns the stored event.
        """
        self._member(agent)
        recipients = self._recipients(agent, to)
        event, request = self._turn_request(
            agent,
            instruction,
            recipients,
            constraint=constraint,
            name=name,
            meta=meta,
            facts=facts,
        )
        event = self.context.finish(event, await self.context.generate(request), postprocess)
        self._append(event, recipients, shown)
        if recipients is None:
            self._off_the_record(agent, event, off_the_record)
        return event

    def post(
        self,
        agent: Agent,
        text: str,
        *,
        to: Iterable[str] | None = None,
        name: str = "turn",
        meta: dict[str, Any] | None = None,
        shown: str | None = None,
    ) -> Event:
        """A scripted turn (no model call): the next turn of the round in progress.

        Stored with `text`; `shown` (default: the text) enters the room, publicly or, with
        `to=[names]`, as a direct message (see `speak`). Returns the stored event.
        """
        self._member(agent)
        recipients = self._recipients(agent, to)
        extra = dict(meta or {})
        if recipients is not None:
            extra[RECIPIENTS] = sorted(recipients)
        log = self.context.log
        reserved = log.reserve(
            kind="message",
            name=name,
            round=self._round,
            turn=self._next_turn(),
            agent=agent.name,
            role=agent.role,
            channel="public" if recipients is None else "direct",
            meta=extra,
        )
        event = log.complete(replace(reserved, text=text))
        self._transcript.append(
            Entry(
                event.round,
                event.turn or 0,
                event.agent,
                text if shown is None else shown,
                recipients,
            )
        )
        return event

    async def run_round(
        self,
        instruction_for: InstructionFor,
        *,
        agents: Iterable[Agent] | None = None,
        simultaneous: bool = False,
        constraint: OutputConstraint | None = None,
        name: str = "turn",
        postprocess: Postprocess | None = None,
        shown: Shown | None = None,
        facts: Facts = None,
        off_the_record: OffTheRecord | None = None,
    ) -> list[Event]:
        """Begin the next round: every agent (or those of `agents`) speaks once, publicly, in
        this round's order (`postprocess`, `shown`, `facts`, `off_the_record`: see `speak`).
        Returns the turns' events.

        With `simultaneous`, they all answer from the view before the round, concurrently, and
        nobody sees another's message of the same round; their off-the-record probes follow
        the round (a simultaneous turn is over once the round's messages are revealed).
        """
        number = self.next_round()
        speakers = self._speakers(number, agents)

        def instruction(agent: Agent) -> str:
            return instruction_for if isinstance(instruction_for, str) else instruction_for(agent)

        if not simultaneous:
            return [
                await self.speak(
                    agent,
                    instruction(agent),
                    constraint=constraint,
                    name=name,
                    postprocess=postprocess,
                    shown=shown,
                    facts=facts,
                    off_the_record=off_the_record,
                )
                for agent in speakers
            ]
        prepared = [
            self._turn_request(
                agent, instruction(agent), None, constraint=constraint, name=name, facts=facts
            )
            for agent in speakers
        ]
        # A task group cancels the other answers of the round if one call fails; the first
        # failure is re-raised as itself (e.g. BackendUnavailable), not as a group.
        try:
            async with asyncio.TaskGroup() as group:
                calls = [group.create_task(self.context.generate(r)) for _, r in prepared]
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None
        events = []
        for (reserved, _), call in zip(prepared, calls, strict=True):
            event = self.context.finish(reserved, call.result(), postprocess)
            self._append(event, None, shown)
            events.append(event)
        for agent, event in zip(speakers, events, strict=True):
            self._off_the_record(agent, event, off_the_record)
        return events

    def _off_the_record(
        self, agent: Agent, turn: Event, asking: OffTheRecord | None
    ) -> asyncio.Task[Event] | None:
        """The speaker's off-the-record probe after its public turn (at the turn's round)."""
        if asking is None or (asking.agents is not None and agent.name not in asking.agents):
            return None
        question = asking.question
        task = self.probe(
            agent,
            question if isinstance(question, str) else question(agent),
            name=OFF_THE_RECORD,
            constraint=asking.constraint,
            settings=asking.settings,
            full_history=asking.full_history,
            meta={TURN_SEQ: turn.seq},
            postprocess=asking.postprocess,
            facts=asking.facts,
        )
        if asking.asked is not None:
            asking.asked(task)
        return task

    def probe(
        self,
        agent: Agent,
        question: str,
        *,
        name: str = "answer",
        kind: str = "probe",
        constraint: OutputConstraint | None = None,
        settings: GenerationSettings = PROBE_SETTINGS,
        self_name: str = "You",
        full_history: bool = False,
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
        facts: Facts = None,
    ) -> asyncio.Task[Event]:
        """Ask `agent` privately, from its current view; the answer never enters the room.

        Stored on channel `private` with round = the checkpoint (the round in progress). The
        prompt is fixed now; the call runs off the critical path (await the task for the stored
        event, or `context.drain()`), so the next turns need not wait for it. `facts` go into
        the call information only.
        """
        self._member(agent)
        checkpoint = self._round
        messages, seen = self._prompt(agent, question, self_name, full_history, checkpoint)
        event, request = self.context.prepare(
            agent.model,
            messages,
            kind=kind,
            name=name,
            round=checkpoint,
            turn=None,
            agent=agent.name,
            role=agent.role,
            channel="private",
            settings=settings,
            constraint=constraint,
            critical=False,
            meta=meta,
            facts=_facts(agent, facts),
            seen=seen,
        )

        async def call() -> Event:
            return self.context.finish(event, await self.context.generate(request), postprocess)

        return self.context.spawn(call())

    def checkpoint(
        self,
        question_for: InstructionFor,
        *,
        agents: Iterable[Agent] | None = None,
        name: str = "answer",
        kind: str = "probe",
        constraint: OutputConstraint | None = None,
        settings: GenerationSettings = PROBE_SETTINGS,
        self_name: str = "You",
        full_history: bool = False,
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
        facts: Facts = None,
    ) -> list[asyncio.Task[Event]]:
        """Probe every agent (or those of `agents`, in that order) privately at once; the
        probes of one checkpoint run concurrently. The options are those of `probe`."""
        chosen = self.agents if agents is None else list(agents)
        return [
            self.probe(
                agent,
                question_for if isinstance(question_for, str) else question_for(agent),
                name=name,
                kind=kind,
                constraint=constraint,
                settings=settings,
                self_name=self_name,
                full_history=full_history,
                meta=meta,
                postprocess=postprocess,
                facts=facts,
            )
            for agent in chosen
        ]

    # bookkeeping ------------------------------------------------------------------------------
    def _next_turn(self) -> int:
        turn = self._turns
        self._turns += 1
        return turn

    def _member(self, agent: Agent) -> None:
        if agent not in self.agents:
            raise ValueError(f"agent {agent.name!r} is not in this room")

    def _speakers(self, number: int, agents: Iterable[Agent] | None) -> list[Agent]:
        order = self.order(number)
        if agents is None:
            return order
        chosen = list(agents)
        for agent in chosen:
            self._member(agent)
        names = {a.name for a in chosen}
        if len(names) != len(chosen) or not chosen:
            raise ValueError("a round's agents must be distinct, and at least one")
        return [agent for agent in order if agent.name in names]

    def _recipients(self, sender: Agent, to: Iterable[str] | None) -> frozenset[str] | None:
        if to is None:
            return None
        if isinstance(to, str):
            raise TypeError("`to` takes a list of agent names, not one string")
        recipients = frozenset(to)
        unknown = sorted(recipients - {a.name for a in self.agents})
        if unknown:
            raise ValueError(f"direct message to {unknown}, who are not in this room")
        if not recipients or sender.name in recipients:
            raise ValueError("a direct message needs recipients other than its sender")
        return recipients

    def _turn_request(
        self,
        agent: Agent,
        instruction: str,
        recipients: frozenset[str] | None,
        *,
        constraint: OutputConstraint | None,
        name: str,
        meta: dict[str, Any] | None = None,
        facts: Facts = None,
    ) -> tuple[Event, Request]:
        messages, seen = self._prompt(agent, instruction, completed_rounds=self._round - 1)
        extra = dict(meta or {})
        if recipients is not None:
            extra[RECIPIENTS] = sorted(recipients)
        return self.context.prepare(
            agent.model,
            messages,
            kind="message",
            name=name,
            round=self._round,
            turn=self._next_turn(),
            agent=agent.name,
            role=agent.role,
            channel="public" if recipients is None else "direct",
            settings=agent.settings,
            constraint=constraint,
            critical=True,
            meta=extra,
            facts=_facts(agent, facts),
            seen=seen,
        )

    def _append(
        self, event: Event, recipients: frozenset[str] | None, shown: Shown | None = None
    ) -> None:
        text = shown(event) if shown is not None else event.text
        if event.status == "ok" or text:
            self._transcript.append(
                Entry(event.round, event.turn or 0, event.agent, text, recipients, event.reasoning)
            )


def _facts(agent: Agent, facts: Facts) -> Mapping[str, Any]:
    """The agent's own facts with the call's on top."""
    if not facts:
        return agent.facts
    return {**agent.facts, **facts} if agent.facts else facts
