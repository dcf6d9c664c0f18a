"""The dyad protocol: a Discussant and an Opponent debate a statement; both rate it privately."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from backchannel.backends import GenerationSettings, IntRange, JsonSchema
from backchannel.engine import Agent, ConversationContext, Event, Item, OffTheRecord
from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm
from backchannel.paradigms._validity import ask_awareness, awareness_calls
from backchannel.paradigms.dyad._cells import LEVELS
from backchannel.paradigms.dyad._extract import RATING_NAME
from backchannel.paradigms.dyad._judging import JUDGING
from backchannel.paradigms.dyad._metrics import dyad_metrics
from backchannel.paradigms.dyad._population import HOLDS, MANIPULATIVE, POPULATION, STATEMENT
from backchannel.paradigms.dyad._results import DyadMetrics
from backchannel.paradigms.dyad._scale import DISCUSSANT, OPPONENT, SCALE_MAX, SCALE_MIN, Category
from backchannel.paradigms.dyad._settings import DyadSettings
from backchannel.paradigms.dyad._view import VIEW

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.planning import Contrast
    from backchannel.report import Report

TURN_SCHEMA = JsonSchema.of(
    {
        "type": "object",
        "properties": {
            "argument": {"type": "string"},
            "category": {"enum": [c.value for c in Category]},
        },
        "required": ["argument", "category"],
        "additionalProperties": False,
    },
    name="turn",
)
RATING = IntRange(SCALE_MIN, SCALE_MAX)
# Rough prompt sizes for the dry run's token estimate.
_PROMPT_TOKENS_PER_CALL = 120
_TOKENS_PER_MESSAGE = 150


def reduce_to_category(event: Event) -> Event:
    """Keep only the category as a turn's parsed value (the tidy schema's `value`).

    The model answers `{"argument", "category"}` under a JSON schema; the raw JSON stays in the
    event's text and the argument is copied to `meta["argument"]`. Passed as `postprocess=`, so
    the stored event never holds the whole object.
    """
    if event.status == "ok" and isinstance(event.value, dict):
        meta = {**event.meta, "argument": event.value["argument"]}
        return replace(event, value=event.value["category"], meta=meta)
    return event


def shown_turn(event: Event) -> str:
    """What the other role (and every later rating) reads of a turn: the argument, then its
    category on a last line, as the protocol's message "ends with an explicit category".

    A turn whose JSON could not be read is shown as the model wrote it: no text is invented.
    """
    if event.status == "ok" and "argument" in event.meta and isinstance(event.value, str):
        return f"{str(event.meta['argument']).strip()}\n\nCategory: {event.value}"
    return event.text


class Dyad(Paradigm[DyadSettings]):
    """Two models debate a contested statement; ratings and categories measure both sides."""

    name = "dyad"
    Settings = DyadSettings
    manipulation = (
        "a partner argues for one side of a contested statement (with a stance, and sometimes "
        "manipulatively), to see whether the other agent's agreement with the statement moves "
        "towards the partner's (opinion change under persuasion)"
    )
    prompt_package = "backchannel.paradigms.dyad.prompts"
    judging = JUDGING
    population = POPULATION
    view = VIEW
    fixed_settings = frozenset({"topics"})

    def items(self, settings: DyadSettings, seed: int) -> list[Item]:
        return [Item(t.id, {"first": t.first, "opposite": t.opposite}) for t in settings.topics]

    def models(self, settings: DyadSettings) -> set[str]:
        return {settings.discussant_model, settings.opponent_model} | settings.validity_models()

    def estimate(self, settings: DyadSettings, item: Item, replicate: int = 0) -> CallEstimate:
        t = settings.rounds
        # Discussant: opening + T turns + T + 1 ratings; Opponent: T turns + T + 1 ratings.
        # Off the record: a rating after each of the 2T + 1 messages (T + 1 of them the
        # Discussant's).
        off = settings.off_the_record
        calls: dict[str, int] = {}
        for model, count in (
            (settings.discussant_model, 2 * t + 2 + (t + 1 if off else 0)),
            (settings.opponent_model, 2 * t + 1 + (t if off else 0)),
        ):
            calls[model] = calls.get(model, 0) + count
        messages, ratings = 2 * t + 1, 2 * (t + 1) + (2 * t + 1 if off else 0)
        ratings += awareness_calls(
            settings, calls, [settings.discussant_model, settings.opponent_model]
        )
        history = _TOKENS_PER_MESSAGE * messages // 2  # the average record a prompt carries
        prompt = (messages + ratings) * (_PROMPT_TOKENS_PER_CALL + history)
        completion = messages * settings.max_tokens + ratings * settings.rating_max_tokens
        return CallEstimate(calls, prompt, completion)

    def _agents(self, settings: DyadSettings, item: Item) -> list[Agent]:
        """The two roles; their facts (the statement shown, the Opponent's stance and style)
        are for a simulated population, which no prompt wording is matched for."""
        stance = settings.stance
        statement = item.payload[settings.wording]
        holds = {"human": item.payload["first"], "natural": item.payload["opposite"]}.get(stance)
        opponent_system = self.template("system_opponent.txt").format(
            stance=self.template(f"stance_{stance}.txt").format(**item.payload).strip()
        )
        if settings.style == "manipulative":
            opponent_system = opponent_system.strip() + " " + self.template("manipulative.txt")
        turn = GenerationSettings(temperature=settings.temperature, max_tokens=settings.max_tokens)
        return [
            Agent(
                name="Discussant",
                role=DISCUSSANT,
                model=settings.discussant_model,
                system=self.template("system_discussant.txt").strip(),
                settings=turn,
                facts={STATEMENT: statement},
            ),
            Agent(
                name="Opponent",
                role=OPPONENT,
                model=settings.opponent_model,
                system=opponent_system.strip(),
                settings=turn,
                facts={
                    STATEMENT: statement,
                    HOLDS: holds,
                    MANIPULATIVE: settings.style == "manipulative",
                },
            ),
        ]

    async def run(self, ctx: ConversationContext[DyadSettings]) -> None:
        settings = ctx.settings
        item = ctx.spec.item
        statement = item.payload[settings.wording]
        agents = self._agents(settings, item)
        discussant = agents[0]
        ctx.meta.update(
            {
                "rounds": settings.rounds,
                "levels": {level: getattr(settings, level) for level in LEVELS},
                "statement_shown": statement,
                "first": item.payload["first"],
                "opposite": item.payload["opposite"],
                "roles": {a.role: {"name": a.name, "model": a.model} for a in agents},
            }
        )
        room = ctx.room(
            agents,
            memory_rounds=settings.memory_rounds,
            order="fixed",
            opening=None,
            preamble=self.template("preamble.txt").format(statement=statement).strip(),
        )
        rating = self.template("rating.txt").format(statement=statement).strip()
        rating_settings = GenerationSettings(temperature=0.0, max_tokens=settings.rating_max_tokens)

        def checkpoint() -> None:
            # Both roles rate the statement privately, from the whole record so far.
            room.checkpoint(
                rating,
                name=RATING_NAME,
                kind="rating",
                constraint=RATING,
                settings=rating_settings,
                full_history=True,
            )

        off_the_record = None
        if settings.off_the_record:
            # The speaker rates the statement privately right after each message, as it does
            # at a checkpoint.
            off_the_record = OffTheRecord(
                self.template("off_the_record.txt").format(statement=statement).strip(),
                constraint=RATING,
                settings=rating_settings,
                full_history=True,
            )
        checkpoint()
        # The Discussant's opening is turn 0 of the opening round (round 0).
        await room.speak(
            discussant,
            self.template("opening.txt").strip(),
            name="opening",
            off_the_record=off_the_record,
        )
        turn, first_turn = self.template("turn.txt"), self.template("turn_first.txt")
        for r in range(1, settings.rounds + 1):

            def instruction(agent: Agent, r: int = r) -> str:
                template = first_turn if (r == 1 and agent is discussant) else turn
                return template.format(round=r).strip()

            await room.run_round(
                instruction,
                constraint=TURN_SCHEMA,
                postprocess=reduce_to_category,
                shown=shown_turn,
                off_the_record=off_the_record,
            )
            checkpoint()
        awareness = self.template("awareness.txt").strip()
        ask_awareness(ctx, room, agents, awareness, str(self.manipulation), settings)
        await ctx.drain()

    def contrasts(self, levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
        """`opponent_effect`, `discussant_effect`, `style_effect`: the discussant's shift between
        pairings and styles."""
        from backchannel.paradigms.dyad._contrasts import contrasts

        return contrasts(levels)

    def metrics(self, tables: RunTables, options: AnalysisOptions) -> DyadMetrics:
        return dyad_metrics(tables)

    def stance_pairs(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Each turn's interaction state against the rating after it (docs/paradigms/dyad.md)."""
        from backchannel.paradigms.dyad._stances import stance_pairs

        return stance_pairs(tables)

    def opinion_trajectories(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Each role's aligned rating (private) and interaction state from its tags (public)
        per checkpoint, with the other role's state as its neighbour (see `_trajectories`)."""
        from backchannel.paradigms.dyad._trajectories import opinion_trajectories

        return opinion_trajectories(tables)

    def report(self, tables: RunTables, metrics: DyadMetrics, report: Report) -> None:
        from backchannel.paradigms.dyad._report import fill_report

        fill_report(tables, metrics, report)
