"""The discussion paradigm: the engine's reference protocol and the quickstart's fallback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backchannel.backends import GenerationSettings
from backchannel.engine import Agent, ConversationContext, Item
from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm
from backchannel.paradigms.discussion._metrics import discussion_metrics
from backchannel.paradigms.discussion._personas import roster
from backchannel.paradigms.discussion._settings import DiscussionSettings

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.paradigms.discussion._results import DiscussionMetrics
    from backchannel.report import Report


class Discussion(Paradigm[DiscussionSettings]):
    """N agents discuss a question for T rounds; each is asked privately before round 1 and after
    every round."""

    name = "discussion"
    Settings = DiscussionSettings
    prompt_package = "backchannel.paradigms.discussion.prompts"
    fixed_settings = frozenset({"questions"})
    label_factors = True

    def items(self, settings: DiscussionSettings, seed: int) -> list[Item]:
        return [Item(q.id, {"question": q.question}) for q in settings.questions]

    def models(self, settings: DiscussionSettings) -> set[str]:
        return {settings.model}

    def estimate(
        self, settings: DiscussionSettings, item: Item, replicate: int = 0
    ) -> CallEstimate:
        n, t = settings.agents, settings.rounds
        calls = n * t + n * (t + 1)
        prompt = n * t * 150 + n * (t + 1) * 150
        completion = n * t * settings.max_tokens + n * (t + 1) * settings.probe_max_tokens
        return CallEstimate({settings.model: calls}, prompt, completion)

    async def run(self, ctx: ConversationContext[DiscussionSettings]) -> None:
        settings = ctx.settings
        question = ctx.spec.item.payload["question"]
        model = settings.model
        turn_settings = GenerationSettings(
            temperature=settings.temperature, max_tokens=settings.max_tokens
        )
        system = self.template("system.txt")
        agents = [
            Agent(
                name=name,
                role="participant",
                model=model,
                system=system.format(name=name, persona=persona).strip(),
                settings=turn_settings,
            )
            for name, persona in roster(settings.agents)
        ]
        ctx.meta["agents"] = [{"name": a.name, "role": a.role} for a in agents]
        room = ctx.room(
            agents,
            memory_rounds=settings.memory_rounds,
            order=settings.order,
            opening=self.template("opening.txt").format(question=question).strip(),
            preamble=self.template("preamble.txt").format(question=question).strip(),
        )
        probe = self.template("probe.txt").format(question=question).strip()
        probe_settings = GenerationSettings(temperature=0.0, max_tokens=settings.probe_max_tokens)
        turn = self.template("turn.txt")
        room.checkpoint(probe, settings=probe_settings)
        for round_number in range(1, settings.rounds + 1):
            await room.run_round(turn.format(round=round_number).strip())
            room.checkpoint(probe, settings=probe_settings)
        await ctx.drain()

    def metrics(self, tables: RunTables, options: AnalysisOptions) -> DiscussionMetrics:
        return discussion_metrics(tables)

    def report(self, tables: RunTables, metrics: DiscussionMetrics, report: Report) -> None:
        from backchannel.paradigms.discussion._report import build_report

        build_report(tables, metrics, report)
