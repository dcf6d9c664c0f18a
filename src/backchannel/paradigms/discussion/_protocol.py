"""The discussion paradigm: the engine's reference protocol and the quickstart's fallback."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from backchannel.backends import GenerationSettings
from backchannel.engine import Agent, ConversationContext, Item
from backchannel.errors import ConfigError
from backchannel.paradigms._base import CallEstimate, Paradigm
from backchannel.paradigms.discussion._metrics import discussion_metrics
from backchannel.paradigms.discussion._personas import roster
from backchannel.paradigms.discussion._settings import DiscussionSettings

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.report import Report


class Discussion(Paradigm):
    """N agents discuss a question for T rounds; each is asked privately before round 1 and after
    every round."""

    name = "discussion"
    Settings = DiscussionSettings
    prompt_package = "backchannel.paradigms.discussion.prompts"

    def items(self, settings: Any, seed: int) -> list[Item]:
        return [Item(q.id, {"question": q.question}) for q in settings.questions]

    def check_cell(self, cell: dict[str, Any], settings: Any) -> None:
        """`model` and `agents` vary by cell; other factors are kept as labels of the cells,
        unless they name a setting (set those under settings:) or look like a misspelling."""
        read = ("model", "agents")
        fields = set(DiscussionSettings.model_fields)
        for name in cell:
            if name in read:
                continue
            if name in fields:
                raise ConfigError(
                    f"{name} does not vary by cell in the discussion paradigm; set it under "
                    f"settings: (factors it reads: {', '.join(read)})"
                )
            close = difflib.get_close_matches(name, [*read, *fields], n=1, cutoff=0.75)
            if close:
                raise ConfigError(
                    f"factor {name!r} is not read by the discussion paradigm; did you mean "
                    f"{close[0]!r}? (other factor names are kept as labels of the cells)"
                )
        agents = cell.get("agents", settings.agents)
        if not isinstance(agents, int) or isinstance(agents, bool) or not 1 <= agents <= 10:
            raise ConfigError(f"agents must be a whole number from 1 to 10, got {agents!r}")

    def _model(self, cell: dict[str, Any], settings: DiscussionSettings) -> str:
        return str(cell.get("model", settings.model))

    def models(self, cell: dict[str, Any], settings: Any) -> set[str]:
        return {self._model(cell, settings)}

    def estimate(
        self, cell: dict[str, Any], item: Item, settings: Any, replicate: int = 0
    ) -> CallEstimate:
        n, t = int(cell.get("agents", settings.agents)), settings.rounds
        calls = n * t + n * (t + 1)
        prompt = n * t * 150 + n * (t + 1) * 150
        completion = n * t * settings.max_tokens + n * (t + 1) * settings.probe_max_tokens
        return CallEstimate({self._model(cell, settings): calls}, prompt, completion)

    async def run(self, ctx: ConversationContext) -> None:
        settings: DiscussionSettings = ctx.settings
        cell = ctx.spec.cell
        question = ctx.spec.item.payload["question"]
        model = self._model(cell, settings)
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
            for name, persona in roster(int(cell.get("agents", settings.agents)))
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
        room.checkpoint(0, agents, probe, settings=probe_settings)
        for round_number in range(1, settings.rounds + 1):
            await room.run_round(round_number, turn.format(round=round_number).strip())
            room.checkpoint(round_number, agents, probe, settings=probe_settings)
        await ctx.drain()

    def metrics(self, tables: RunTables, **options: Any) -> dict[str, Any]:
        return discussion_metrics(tables)

    def report(self, tables: RunTables, metrics: dict[str, Any], report: Report) -> None:
        from backchannel.paradigms.discussion._report import build_report

        build_report(tables, metrics, report)
