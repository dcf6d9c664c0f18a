"""The council protocol: debate, independent evaluation, verification, optional Delphi round."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from backchannel.analysis import Design
from backchannel.backends import GenerationSettings, JsonSchema, LabelSet, Message
from backchannel.engine import Agent, ConversationContext, Event, Item, OffTheRecord, Room
from backchannel.errors import ConfigError
from backchannel.judges import AWARENESS, MANIPULATION, Judge, judge_event, make_judge
from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm
from backchannel.paradigms._validity import ask_awareness, awareness_calls, judge_awareness
from backchannel.paradigms.council._argued import ARGUED, DebateReference, argued_task
from backchannel.paradigms.council._judging import JUDGING
from backchannel.paradigms.council._metrics import council_metrics
from backchannel.paradigms.council._population import (
    ADVOCATED,
    FIRST_RANKING,
    OPTION_NAME,
    OPTIONS,
    POPULATION,
    RATIONALE,
    VALUE,
)
from backchannel.paradigms.council._profiling import (
    assign_distinct_models,
    assign_models,
    keyword_score,
)
from backchannel.paradigms.council._prompts import (
    PROMPT_PACKAGE,
    advocate_system,
    delphi_messages,
    evaluation_messages,
    profile_messages,
    redact_options,
    scenario_text,
    template,
    verification_messages,
)
from backchannel.paradigms.council._results import CouncilMetrics
from backchannel.paradigms.council._roles import Seat, advocate_models, seats, verifier_model
from backchannel.paradigms.council._scenarios import Scenario, load_scenario
from backchannel.paradigms.council._settings import CouncilSettings
from backchannel.paradigms.council._tension import DEFAULT_THRESHOLD
from backchannel.paradigms.council._values import tension_partner
from backchannel.paradigms.council._view import VIEW
from backchannel.seeding import derive_seed

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.planning import Contrast
    from backchannel.report import Report

DEBATE_ROUNDS = (
    ("position", "position.txt"),
    ("critique", "critique.txt"),
    ("rebuttal", "rebuttal.txt"),
)
EVALUATION_ROUND = len(DEBATE_ROUNDS)
SCORE_SCHEMA = JsonSchema.of(
    {
        "type": "object",
        "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["score"],
    },
    name="verification",
)


def ranking_schema(option_ids: tuple[str, ...]) -> JsonSchema:
    """A JSON object with a full ranking of the option ids and a rationale."""
    return JsonSchema.of(
        {
            "type": "object",
            "properties": {
                "ranking": {
                    "type": "array",
                    "items": {"enum": list(option_ids)},
                    "uniqueItems": True,
                    "minItems": len(option_ids),
                    "maxItems": len(option_ids),
                },
                "rationale": {"type": "string"},
            },
            "required": ["ranking", "rationale"],
        },
        name="ranking",
    )


class Council(Paradigm[CouncilSettings]):
    """Three advocates debate a policy question in three rounds; evaluators, each holding one
    value, rank the options independently; a verifier scores each rationale's faithfulness."""

    name = "council"
    manipulation = (
        "advocates argue for assigned policy options and each evaluator is given a value to "
        "rank the options by (alone, or revising after seeing other evaluators' critiques), to "
        "see whether the rankings follow the assigned values or the debate and the peers "
        "(value-driven deliberation under persuasion)"
    )
    Settings = CouncilSettings
    prompt_package = PROMPT_PACKAGE
    judging = JUDGING
    population = POPULATION
    view = VIEW
    fixed_settings = frozenset({"scenarios", "argued_judge", "argued_max_tokens"})
    reads_options = frozenset({"threshold", "judge"})

    def items(self, settings: CouncilSettings, seed: int) -> list[Item]:
        try:
            scenarios = [load_scenario(name) for name in settings.scenarios]
        except ValueError as error:
            raise ConfigError(f"settings.scenarios: {error}") from error
        ids = [s.id for s in scenarios]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"scenario ids repeat: {ids}")
        return [Item(s.id, s.as_dict()) for s in scenarios]

    def check_cell(self, settings: CouncilSettings) -> None:
        if settings.pool == "B" and not settings.pool_models:
            raise ConfigError("pool B needs `settings.pool_models`, the models of the pool")

    def models(self, settings: CouncilSettings) -> set[str]:
        pool = settings.pool
        found = {verifier_model(settings)} if settings.verify else set()
        if settings.argued_model is not None:
            found.add(settings.argued_model)
        if pool == "A":
            return found | {settings.single_model} | settings.validity_models()
        return found | set(settings.pool_models) | settings.validity_models()

    def estimate(self, settings: CouncilSettings, item: Item, replicate: int = 0) -> CallEstimate:
        pool, delphi = settings.pool, settings.delphi
        scenario = Scenario.from_dict(item.payload)
        calls: dict[str, int] = {}

        def add(model: str, n: int = 1) -> None:
            calls[model] = calls.get(model, 0) + n

        advocates = advocate_models(settings, pool, len(scenario.options), replicate)
        for model in advocates:
            # Off the record: each debate turn is followed by the advocate's private choice.
            add(model, len(DEBATE_ROUNDS) * (2 if settings.off_the_record else 1))
            if settings.argued_model is not None:
                # A model `argued` judge reads each debate turn once.
                add(settings.argued_model, len(DEBATE_ROUNDS))
        roster = settings.roster
        if pool == "B" and settings.profiling:
            for model in settings.pool_models:
                add(model, len(set(roster)))
        # With profiling the evaluators' models depend on the profile answers: the total is
        # exact, the split over pool models is the rotation's.
        seats_now = seats(settings, pool, replicate)
        for seat in seats_now:
            add(seat.model)
            if settings.verify:
                add(verifier_model(settings))
            if delphi != "none" and _revises(seat, roster, delphi):
                add(seat.model)
        awareness_calls(settings, calls, [*advocates, *(s.model for s in seats_now)])
        total = sum(calls.values())
        prompt = total * 900
        completion = total * min(settings.evaluator_max_tokens, 250)
        return CallEstimate(calls, prompt, completion)

    async def run(self, ctx: ConversationContext[CouncilSettings]) -> None:
        settings = ctx.settings
        pool, delphi = settings.pool, settings.delphi
        scenario = Scenario.from_dict(ctx.spec.item.payload)
        assignment = (
            await self._profile(ctx, settings) if pool == "B" and settings.profiling else None
        )
        council = seats(settings, pool, ctx.spec.replicate, assignment)
        advocates = self._advocates(settings, scenario, pool, ctx.spec.replicate)
        ctx.meta.update(
            scenario=scenario.id,
            options=list(scenario.option_ids),
            favourite=scenario.favourite,
            pool=pool,
            delphi=delphi,
            advocates=[{"name": a.name, "model": a.model} for a in advocates],
            evaluators=[{"name": s.name, "value": s.value, "model": s.model} for s in council],
            verifier=verifier_model(settings) if settings.verify else None,
        )
        room, debate = await self._debate(ctx, settings, scenario, advocates)
        rankings = await asyncio.gather(
            *(self._evaluate(ctx, settings, scenario, debate, seat) for seat in council)
        )
        follow_ups = []
        if settings.verify:
            follow_ups += [
                self._verify(ctx, settings, scenario, seat, event)
                for seat, event in zip(council, rankings, strict=True)
                if event.status == "ok"
            ]
        if delphi != "none":
            follow_ups += self._delphi(ctx, settings, scenario, debate, council, rankings, delphi)
        await asyncio.gather(*follow_ups)
        if settings.awareness_probe:
            await self._awareness(
                ctx, settings, scenario, debate, room, advocates, council, rankings
            )
        await ctx.drain()

    async def _awareness(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        debate: str,
        room: Room,
        advocates: list[Agent],
        council: list[Seat],
        rankings: list[Event],
    ) -> None:
        """The final awareness probe: advocates from the debate room, each evaluator after its
        own ranking (evaluators sit in no room: one private call each)."""
        question = self.template("awareness.txt").strip()
        manipulation = str(self.manipulation)
        ask_awareness(ctx, room, advocates, question, manipulation, settings)
        asks = []
        for seat, ranking in zip(council, rankings, strict=True):
            value = settings.values[seat.value]
            messages = evaluation_messages(scenario, debate, value, settings.rationale_words)
            if ranking.text:
                messages.append(Message("assistant", ranking.text))
            messages.append(Message("user", question))
            asks.append(
                ctx.ask(
                    seat.model,
                    messages,
                    kind="probe",
                    name=AWARENESS,
                    round=EVALUATION_ROUND,
                    agent=seat.name,
                    role="evaluator",
                    settings=GenerationSettings(0.0, max_tokens=128),
                    critical=False,
                    meta={"value": seat.value},
                    facts={MANIPULATION: manipulation},
                )
            )
        for answer in await asyncio.gather(*asks):
            judge_awareness(ctx, answer, manipulation, settings)

    def _advocates(
        self, settings: CouncilSettings, scenario: Scenario, pool: str, replicate: int
    ) -> list[Agent]:
        turn = GenerationSettings(settings.temperature, max_tokens=settings.advocate_max_tokens)
        models = advocate_models(settings, pool, len(scenario.options), replicate)
        return [
            Agent(
                name=f"advocate_{option.id}",
                role="advocate",
                model=model,
                system=advocate_system(scenario, option.id),
                settings=turn,
                facts={OPTION_NAME: option.name, ADVOCATED: option.id},
            )
            for option, model in zip(scenario.options, models, strict=True)
        ]

    async def _debate(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        advocates: list[Agent],
    ) -> tuple[Room, str]:
        """Three simultaneous rounds; returns the room and the full debate as text for the
        evaluators."""
        room = ctx.room(
            advocates, memory_rounds=None, order="fixed", preamble=scenario_text(scenario)
        )
        by_agent = {f"advocate_{o.id}": o for o in scenario.options}
        judge = _argued_judge(settings)
        reference = DebateReference.of(scenario.as_dict())
        lines = []
        off_the_record = None
        if settings.off_the_record:
            # Each advocate's private choice among the options, right after its turn.
            off_question = self.template("off_the_record.txt").format(
                option_ids=", ".join(scenario.option_ids)
            )
            off_the_record = OffTheRecord(
                off_question.strip(),
                constraint=LabelSet(scenario.option_ids),
                settings=GenerationSettings(0.0, max_tokens=settings.advocate_max_tokens),
            )
        for number, (name, file) in enumerate(DEBATE_ROUNDS, start=1):

            def instruction(agent: Agent, file: str = file) -> str:
                option = by_agent[agent.name]
                others = " and ".join(o.name for o in scenario.options if o.id != option.id)
                return template(file).format(
                    option_name=option.name, others=others, words=settings.advocate_words
                )

            events = await room.run_round(
                instruction,
                simultaneous=True,
                name=name,
                off_the_record=off_the_record,
            )
            if judge is not None:
                for event in events:
                    if event.status == "ok":
                        ctx.spawn(_judge_argued(ctx, judge, event, reference))
            for event in events:
                option = by_agent[event.agent]
                lines.append(f"[Round {number}, {name}, advocate of {option.name}]\n{event.text}")
        return room, "\n\n".join(lines)

    async def _evaluate(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        debate: str,
        seat: Seat,
    ) -> Event:
        """Phase 2: one evaluator, alone with the debate and its value."""
        value = settings.values[seat.value]
        return await ctx.ask(
            seat.model,
            evaluation_messages(scenario, debate, value, settings.rationale_words),
            kind="ranking",
            name="ranking",
            round=EVALUATION_ROUND,
            agent=seat.name,
            role="evaluator",
            settings=GenerationSettings(
                settings.temperature, max_tokens=settings.evaluator_max_tokens
            ),
            constraint=ranking_schema(scenario.option_ids),
            critical=True,
            meta={"value": seat.value},
            facts={VALUE: value.name, OPTIONS: scenario.option_ids},
        )

    async def _verify(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        seat: Seat,
        ranking: Event,
    ) -> Event:
        """Phase 3: the verifier sees the value, its definition and the redacted rationale only."""
        value = settings.values[seat.value]
        rationale = redact_options(str(ranking.value["rationale"]), scenario)
        return await ctx.ask(
            verifier_model(settings),
            verification_messages(value, rationale),
            kind="score",
            name="verification",
            round=EVALUATION_ROUND,
            agent="verifier",
            role="verifier",
            settings=GenerationSettings(0.0, max_tokens=settings.verifier_max_tokens),
            constraint=SCORE_SCHEMA,
            critical=False,
            meta={"value": seat.value, "evaluator": seat.name},
            postprocess=_score_only,
            facts={VALUE: value.name, RATIONALE: rationale},
        )

    def _delphi(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        debate: str,
        council: list[Seat],
        rankings: list[Event],
        variant: str,
    ) -> list[Any]:
        """One revision per evaluator with a valid first ranking, shown what the variant shows."""
        valid = {
            seat.name: (seat, event)
            for seat, event in zip(council, rankings, strict=True)
            if event.status == "ok"
        }
        roster = [seat.value for seat in council]
        calls = []
        for seat, event in valid.values():
            if not _revises(seat, roster, variant):
                continue
            peers: list[tuple[str, str]] = []
            if variant == "all_critiques":
                peers = [
                    (s.value, str(e.value["rationale"]))
                    for s, e in valid.values()
                    if s.name != seat.name
                ]
            elif variant == "partner_critique":
                partner = tension_partner(seat.value)
                peers = [
                    (s.value, str(e.value["rationale"]))
                    for s, e in valid.values()
                    if s.value == partner
                ][:1]
                if not peers:
                    continue
            value = settings.values[seat.value]
            initial = evaluation_messages(scenario, debate, value, settings.rationale_words)
            messages = delphi_messages(initial, event.text, variant, value, peers)
            first = list(event.value["ranking"])
            calls.append(self._revise(ctx, settings, scenario, seat, messages, variant, first))
        return calls

    async def _revise(
        self,
        ctx: ConversationContext,
        settings: CouncilSettings,
        scenario: Scenario,
        seat: Seat,
        messages: list[Message],
        variant: str,
        first: list[str],
    ) -> Event:
        value = settings.values[seat.value]
        return await ctx.ask(
            seat.model,
            messages,
            kind="ranking",
            name="revised",
            round=EVALUATION_ROUND,
            agent=seat.name,
            role="evaluator",
            settings=GenerationSettings(
                settings.temperature, max_tokens=settings.evaluator_max_tokens
            ),
            constraint=ranking_schema(scenario.option_ids),
            meta={"value": seat.value, "delphi": variant},
            facts={VALUE: value.name, OPTIONS: scenario.option_ids, FIRST_RANKING: first},
        )

    async def _profile(self, ctx: ConversationContext, settings: CouncilSettings) -> dict[str, str]:
        """Every pool model answers the profile prompt under every seated value.

        The calls carry a seed fixed per run (not per conversation), so the response cache can
        answer a repeated (model, value) call. The scores are stored as events.
        """
        values = list(dict.fromkeys(settings.roster))
        generation = GenerationSettings(0.0, max_tokens=settings.profile_max_tokens)
        jobs = [
            ctx.ask(
                model,
                profile_messages(settings.values[value_name], settings.profile_words),
                kind="score",
                name="profile",
                round=0,
                agent=model,
                role="profiler",
                settings=generation,
                critical=True,
                meta={"value": value_name, "model": model},
                postprocess=_keyword_scorer(settings.values[value_name].keywords),
                seed=derive_seed(ctx.experiment_seed, "council-profile", model, value_name),
            )
            for model in settings.pool_models
            for value_name in values
        ]
        events = await asyncio.gather(*jobs)
        scores: dict[str, dict[str, float]] = {v: {} for v in values}
        for event in events:
            if event.status == "ok":
                scores[event.meta["value"]][event.meta["model"]] = float(event.value)
        assign = assign_distinct_models if settings.profiling_distinct else assign_models
        assignment = assign(scores, settings.pool_models)
        ctx.meta["profile"] = scores
        ctx.meta["assignment"] = assignment
        # One model winning every value makes this state-B deliberation a state-A one in all
        # but name: recorded, counted by the metrics and named in the report.
        ctx.meta["profiling_collapsed"] = (
            len(set(assignment.values())) == 1 and len(set(settings.pool_models)) > 1
        )
        return assignment

    def contrasts(self, levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
        """`fcc_gap`: first-choice concentration, pool A minus pool B."""
        from backchannel.paradigms.council._contrasts import contrasts

        return contrasts(levels)

    def order_answers(self, tables: RunTables) -> pd.DataFrame:
        """Answers against the order of the options shown (see `_order`)."""
        from backchannel.paradigms.council._order import order_answers

        return order_answers(tables)

    def metrics(self, tables: RunTables, options: AnalysisOptions) -> CouncilMetrics:
        """`--threshold`, else the run's setting; a run that varies `threshold` as a factor
        (and no `--threshold`) has each cell use its own level."""
        if options.threshold is not None:
            return council_metrics(tables, threshold=float(options.threshold))
        if "threshold" in Design.of(tables).factors:
            return council_metrics(tables, threshold=None)
        resolved = tables.manifest.get("config_resolved") or {}
        threshold = (resolved.get("settings") or {}).get("threshold", DEFAULT_THRESHOLD)
        return council_metrics(tables, threshold=float(threshold))

    def stance_pairs(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Each advocate turn, as the `argued` labels of `--judge` (default: the inline judge's)
        read it, against its off-the-record choice (docs/paradigms/council.md)."""
        from backchannel.paradigms.council._stances import stance_pairs

        return stance_pairs(tables, options.judge or ARGUED)

    def report(self, tables: RunTables, metrics: CouncilMetrics, report: Report) -> None:
        from backchannel.paradigms.council._report import build_report

        build_report(tables, metrics, report)


def _argued_judge(settings: CouncilSettings) -> Judge | None:
    """The inline `argued` judge the settings name (None: label later, or never)."""
    if settings.argued_judge is None:
        return None
    return make_judge(settings.argued_judge, max_tokens=settings.argued_max_tokens)


async def _judge_argued(
    ctx: ConversationContext, judge: Judge, event: Event, reference: DebateReference
) -> None:
    """Label the option one advocate turn argues, beside the conversation (a failed verdict is
    stored with its status and text: a skipped pair, never a default)."""
    await judge_event(ctx, judge, event, ARGUED, argued_task(reference.option_ids), reference)


def _score_only(event: Event) -> Event:
    """A verification's stored value is the score itself, not the JSON object around it."""
    if event.status == "ok":
        return replace(event, value=float(event.value["score"]))
    return event


def _keyword_scorer(keywords: list[str]) -> Callable[[Event], Event]:
    """Stores a profile answer's keyword score (keyword words per word) as its value."""

    def score(event: Event) -> Event:
        if event.status == "ok":
            return replace(event, value=keyword_score(event.text, keywords))
        return event

    return score


def _revises(seat: Seat, roster: list[str], variant: str) -> bool:
    """Whether this evaluator gets a Delphi round (partner_critique needs a seated partner)."""
    if variant == "partner_critique":
        partner = tension_partner(seat.value)
        return partner is not None and partner in roster
    return variant != "none"
