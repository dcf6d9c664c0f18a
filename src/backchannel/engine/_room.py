"""The room: agents, rounds, speaking order, memory window, visibility and private probes.

The engine owns this bookkeeping; a paradigm only says what is asked in a turn and at a checkpoint.
Prompts put stable parts first (system, persona, preamble) and the changing history after, which
suits the prefix caches of llama.cpp, vLLM and SGLang servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from backchannel.backends import (
    GenerationSettings,
    Message,
    OutputConstraint,
    Request,
)
from backchannel.engine._agent import Agent
from backchannel.engine._conversation import Postprocess
from backchannel.engine._events import Event
from backchannel.engine._memory import MODERATOR, Entry, render_view, visible_entries
from backchannel.engine._order import OrderPolicy, speaking_order

if TYPE_CHECKING:
    from backchannel.engine._conversation import ConversationContext

PROBE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=128)
InstructionFor = Callable[[Agent], str] | str
Shown = Callable[[Event], str]
"""The text of a turn that enters the room, when it is not the raw model output."""


class Room:
    """A group of agents talking in rounds; see `ConversationContext.room`."""

    def __init__(
        self,
        context: ConversationContext,
        agents: Sequence[Agent],
        *,
        memory_rounds: int | None,
        order: OrderPolicy,
        opening: str | None,
        preamble: str,
    ) -> None:
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
        self.transcript: list[Entry] = []
        self.current_round = 0
        if opening is not None:
            self.transcript.append(Entry(0, 0, MODERATOR, opening))
            context.record(
                kind="message",
                name="opening",
                round=0,
                turn=0,
                agent="moderator",
                role="moderator",
                channel="public",
                text=opening,
            )

    def agent(self, name: str) -> Agent:
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def order(self, round_number: int) -> list[Agent]:
        return speaking_order(
            self.agents, round_number, self.order_policy, self.context.experiment_seed
        )

    def view(
        self,
        viewer: str,
        *,
        self_name: str = "You",
        full_history: bool = False,
        completed_rounds: int | None = None,
    ) -> str:
        """What `viewer` remembers once `completed_rounds` are over (default: the latest round
        spoken in), as text."""
        entries = visible_entries(
            self.transcript,
            viewer,
            self.current_round if completed_rounds is None else completed_rounds,
            None if full_history else self.memory_rounds,
        )
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
        uses r - 1, a probe at checkpoint c uses c; the default is the latest round spoken in.
        """
        messages = []
        system = "\n\n".join(part for part in (agent.system, agent.persona) if part)
        if system:
            messages.append(Message("system", system))
        history = self.view(
            agent.name,
            self_name=self_name,
            full_history=full_history,
            completed_rounds=completed_rounds,
        )
        parts = [self.preamble] if self.preamble else []
        if history:
            parts.append("Conversation so far:\n\n" + history)
        parts.append(instruction)
        messages.append(Message("user", "\n\n".join(parts)))
        return messages

    async def speak(
        self,
        agent: Agent,
        instruction: str,
        *,
        round: int,
        turn: int,
        audience: Iterable[str] | None = None,
        constraint: OutputConstraint | None = None,
        name: str = "turn",
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
        shown: Shown | None = None,
    ) -> Event:
        """One turn: the agent answers from its view; the answer enters the transcript.

        `postprocess(event)` may reshape the parsed value or meta before anything else sees the
        event; `shown(event)` is the text that enters the room (default: the raw text).
        """
        self.current_round = max(self.current_round, round)
        event, request = self._turn_request(
            agent,
            instruction,
            round=round,
            turn=turn,
            audience=audience,
            constraint=constraint,
            name=name,
            meta=meta,
        )
        self.context.finish(event, await self.context.generate(request), postprocess)
        self._append(event, audience, shown)
        return event

    def _turn_request(
        self,
        agent: Agent,
        instruction: str,
        *,
        round: int,
        turn: int,
        audience: Iterable[str] | None,
        constraint: OutputConstraint | None,
        name: str,
        meta: dict[str, Any] | None,
    ) -> tuple[Event, Request]:
        messages = self.prompt(agent, instruction, completed_rounds=round - 1)
        extra = dict(meta or {})
        if audience is not None:
            extra["audience"] = sorted(audience)
        return self.context.prepare(
            agent.model,
            messages,
            kind="message",
            name=name,
            round=round,
            turn=turn,
            agent=agent.name,
            role=agent.role,
            channel="public",
            settings=agent.settings,
            constraint=constraint,
            critical=True,
            meta=extra,
        )

    def _append(
        self, event: Event, audience: Iterable[str] | None, shown: Shown | None = None
    ) -> None:
        text = shown(event) if shown is not None else event.text
        if event.status == "ok" or text:
            self.transcript.append(
                Entry(
                    event.round,
                    event.turn or 0,
                    event.agent,
                    text,
                    None if audience is None else frozenset(audience),
                    event.reasoning,
                )
            )

    async def run_round(
        self,
        round_number: int,
        instruction_for: InstructionFor,
        *,
        simultaneous: bool = False,
        constraint: OutputConstraint | None = None,
        name: str = "turn",
        postprocess: Postprocess | None = None,
        shown: Shown | None = None,
    ) -> list[Event]:
        """Every agent speaks once, in this round's order (`postprocess`, `shown`: see `speak`).

        With `simultaneous`, all agents answer from the view before the round, concurrently, and
        nobody sees another's message of the same round.
        """
        self.current_round = round_number
        agents = self.order(round_number)

        def instruction(agent: Agent) -> str:
            return instruction_for if isinstance(instruction_for, str) else instruction_for(agent)

        if not simultaneous:
            return [
                await self.speak(
                    agent,
                    instruction(agent),
                    round=round_number,
                    turn=turn,
                    constraint=constraint,
                    name=name,
                    postprocess=postprocess,
                    shown=shown,
                )
                for turn, agent in enumerate(agents)
            ]
        prepared = [
            self._turn_request(
                agent,
                instruction(agent),
                round=round_number,
                turn=turn,
                audience=None,
                constraint=constraint,
                name=name,
                meta=None,
            )
            for turn, agent in enumerate(agents)
        ]
        # A task group cancels the other answers of the round if one call fails; the first
        # failure is re-raised as itself (e.g. BackendUnavailable), not as a group.
        try:
            async with asyncio.TaskGroup() as group:
                calls = [group.create_task(self.context.generate(r)) for _, r in prepared]
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None
        completions = [call.result() for call in calls]
        events = []
        for (event, _), completion in zip(prepared, completions, strict=True):
            self.context.finish(event, completion, postprocess)
            self._append(event, None, shown)
            events.append(event)
        return events

    def probe(
        self,
        agent: Agent,
        question: str,
        *,
        checkpoint: int,
        name: str = "answer",
        constraint: OutputConstraint | None = None,
        settings: GenerationSettings = PROBE_SETTINGS,
        self_name: str = "You",
        full_history: bool = False,
        kind: str = "probe",
        meta: dict[str, Any] | None = None,
        postprocess: Postprocess | None = None,
    ) -> asyncio.Task[Event]:
        """Ask `agent` privately, from its current view; the answer never enters the room.

        The prompt is fixed now; the call runs off the critical path (await the task, or
        `context.drain()`), so the next turns need not wait for it.
        """
        messages = self.prompt(
            agent,
            question,
            self_name=self_name,
            full_history=full_history,
            completed_rounds=checkpoint,
        )
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
        )

        async def call() -> Event:
            self.context.finish(event, await self.context.generate(request), postprocess)
            return event

        return self.context.spawn(call())

    def checkpoint(
        self,
        checkpoint: int,
        agents: Sequence[Agent],
        question_for: InstructionFor,
        *,
        name: str = "answer",
        constraint: OutputConstraint | None = None,
        settings: GenerationSettings = PROBE_SETTINGS,
        self_name: str = "You",
    ) -> list[asyncio.Task[Event]]:
        """Probe each agent privately at once; the probes of one checkpoint run concurrently."""
        return [
            self.probe(
                agent,
                question_for if isinstance(question_for, str) else question_for(agent),
                checkpoint=checkpoint,
                name=name,
                constraint=constraint,
                settings=settings,
                self_name=self_name,
            )
            for agent in agents
        ]
