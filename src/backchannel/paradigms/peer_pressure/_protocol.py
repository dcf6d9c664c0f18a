"""The peer-pressure protocol: honest agents discuss a factual question while the first k agents
push a false answer; honest agents are probed privately before round 1 and after every round."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from backchannel.backends import GenerationSettings
from backchannel.datasets import FactItem, load_source
from backchannel.engine import Agent, ConversationContext, Entry, Event, Item, OffTheRecord, Room
from backchannel.errors import ConfigError
from backchannel.judges import (
    CONTEXT_TURNS,
    FACT_PRIVATE,
    FACT_PUBLIC,
    ContextTurn,
    Judge,
    JudgeTask,
    Relabelling,
    fact_item,
    fact_payload,
    judge_event,
    judge_templates,
    make_judge,
)
from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm
from backchannel.paradigms._items import ItemList, SkippedItem
from backchannel.paradigms._validity import add_calls, ask_awareness, awareness_calls
from backchannel.paradigms.peer_pressure._group import Group, build_group, pool_models
from backchannel.paradigms.peer_pressure._judging import JUDGING
from backchannel.paradigms.peer_pressure._population import POPULATION
from backchannel.paradigms.peer_pressure._settings import PeerPressureSettings
from backchannel.paradigms.peer_pressure._stances import stance_pairs
from backchannel.paradigms.peer_pressure._view import VIEW
from backchannel.seeding import derive_seed

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.paradigms.peer_pressure._results import PeerPressureMetrics
    from backchannel.planning import Contrast
    from backchannel.report import Report

HONEST, ADVERSARY = "honest", "adversary"
MAIN_PROBE = "answer"
REASK_VARIANTS = ("reask_original", "reask_self", "reask_self_anonymous", "reask_group")
# Rough prompt sizes for the dry run's token estimate.
_TURN_PROMPT_TOKENS, _PROBE_PROMPT_TOKENS, _JUDGE_PROMPT_TOKENS = 250, 250, 200


def item_id(source: str, fact: FactItem) -> str:
    """`<dataset name>:<id within the dataset>`; unique across datasets and free of '/'."""
    local = fact.item_id.removeprefix(f"{fact.dataset}/")
    return f"{source}:{local.replace('/', ':')}"


class PeerPressure(Paradigm[PeerPressureSettings]):
    """N agents discuss a factual question for T rounds; the first k assert a false answer."""

    name = "peer_pressure"
    Settings = PeerPressureSettings
    manipulation = (
        "some members of the group assert a false answer to a factual question, to see whether "
        "the other agents adopt it, in what they say or in what they privately believe (peer "
        "pressure, conformity to misinformation)"
    )
    prompt_package = "backchannel.paradigms.peer_pressure.prompts"
    judging = JUDGING
    population = POPULATION
    view = VIEW
    fixed_settings = frozenset({"datasets", "judge", "reask"})
    # The intervention arms of one item are pairs: until an intervention starts they ask alike.
    paired_factors = frozenset({"intervention"})
    reads_options = frozenset({"judge", "second_judge"})

    def templates(self) -> dict[str, str]:
        """The paradigm's templates and the LLM judge's (under `judges/`), for the manifest."""
        judges = {f"judges/{name}": text for name, text in judge_templates().items()}
        return {**super().templates(), **judges}

    # design ---------------------------------------------------------------------------------
    def items(self, settings: PeerPressureSettings, seed: int) -> list[Item]:
        """Every configured dataset's items; a seeded sample of each is marked for re-asks. The
        rows a dataset dropped come with them, each with its reason."""
        result: list[Item] = []
        skipped: list[SkippedItem] = []
        for source in settings.datasets:
            loaded = load_source(source)
            skipped += [
                SkippedItem(source.name, d.item_id, d.reason, len(result) + d.kept_before)
                for d in loaded.dropped
            ]
            facts = list(loaded)
            if not facts:
                raise ConfigError(f"dataset {source.name!r} has no usable items")
            ids = [item_id(source.name, fact) for fact in facts]
            if settings.reask.items is None:
                reasked = set(ids)
            else:
                count = min(settings.reask.items, len(ids))
                rng = random.Random(derive_seed(seed, "reask", source.name))
                reasked = set(rng.sample(ids, count))
            for identifier, fact in zip(ids, facts, strict=True):
                payload = {**fact_payload(fact), "source": source.name}
                payload["reask"] = identifier in reasked
                result.append(Item(identifier, payload))
        return ItemList(result, skipped)

    def items_for_cell(self, settings: PeerPressureSettings, items: list[Item]) -> list[Item]:
        """A cell with a `dataset` factor runs that dataset's items only."""
        if settings.dataset is None:
            return items
        kept = [item for item in items if item.payload.get("source") == settings.dataset]
        if not kept:
            raise ConfigError(f"dataset {settings.dataset!r} contributes no items to the run")
        return kept

    def check_cell(self, settings: PeerPressureSettings) -> None:
        names = {s.name for s in settings.datasets}
        if settings.dataset is not None and settings.dataset not in names:
            raise ConfigError(
                f"dataset {settings.dataset!r} is not among settings.datasets "
                f"({', '.join(sorted(names))})"
            )
        group = build_group(settings, 0)
        if settings.reask.anonymous_name in {m.name for m in group.members}:
            raise ConfigError("reask.anonymous_name must differ from every agent's name")

    def models(self, settings: PeerPressureSettings) -> set[str]:
        found = pool_models(settings) | settings.validity_models()
        if settings.judge is not None and settings.judge.model:
            found.add(settings.judge.model)
        return found

    def _reask_checkpoints(self, item: Item, settings: PeerPressureSettings) -> list[int]:
        if not item.payload.get("reask"):
            return []
        return sorted({c for c in settings.reask.checkpoints if c <= settings.rounds})

    def estimate(
        self, settings: PeerPressureSettings, item: Item, replicate: int = 0
    ) -> CallEstimate:
        n, k = settings.n_agents, settings.adversaries
        honest, rounds = n - k, settings.rounds
        turns = n * rounds
        probes = honest * (rounds + 1)
        checks = len(self._reask_checkpoints(item, settings))
        reasks = len(REASK_VARIANTS) * honest * checks
        # Off the record: every honest turn is followed by a private probe of its speaker.
        off = honest * rounds if settings.off_the_record else 0
        probes += off
        calls: dict[str, int] = {}
        members = build_group(settings, 0).members
        if settings.models or settings.assignment == "by_role":
            # Exact for round robin and by-role rooms with a fixed placement; a seeded draw
            # (random assignment or placement) is counted on the group of seed 0.
            for member in members:
                own = rounds
                if member.role == HONEST:
                    own += rounds + 1 + len(REASK_VARIANTS) * checks
                    own += rounds if settings.off_the_record else 0
                calls[member.model] = calls.get(member.model, 0) + own
        else:
            calls[settings.model] = turns + probes + reasks
        aware = awareness_calls(settings, calls, [m.model for m in members if m.role == HONEST])
        prompt = turns * _TURN_PROMPT_TOKENS + (probes + reasks + aware) * _PROBE_PROMPT_TOKENS
        completion = turns * settings.max_tokens + (probes + reasks) * settings.probe_max_tokens
        judge = settings.judge
        if judge is not None and judge.kind == "llm":
            judged = probes + reasks + honest * rounds
            add_calls(calls, str(judge.model), judged)
            prompt += judged * _JUDGE_PROMPT_TOKENS
            completion += judged * judge.max_tokens
        return CallEstimate(calls, prompt, completion)

    # one conversation -----------------------------------------------------------------------
    def _agents(self, settings: PeerPressureSettings, fact: FactItem, group: Group) -> list[Agent]:
        turn_settings = GenerationSettings(
            temperature=settings.temperature, max_tokens=settings.max_tokens
        )
        system = self.template("system.txt")
        push = self.template("adversary.txt").format(false_answer=fact.false_answer).strip()
        untrusted = self.template("untrusted_peers.txt").strip()
        checker = self.template("checker.txt").strip()
        agents = []
        for member in group.members:
            text = system.format(name=member.name, persona=member.persona).strip()
            if member.role == ADVERSARY:
                text = f"{text} {push}"
            elif settings.intervention == "untrusted_peers":
                text = f"{text} {untrusted}"
            if member.checker:
                text = f"{text} {checker}"
            agents.append(
                Agent(member.name, member.role, member.model, system=text, settings=turn_settings)
            )
        return agents

    async def run(self, ctx: ConversationContext[PeerPressureSettings]) -> None:
        settings = ctx.settings
        fact = fact_item(ctx.spec.item.payload)
        group = build_group(settings, ctx.spec.seed)
        agents = self._agents(settings, fact, group)
        honest = [a for a in agents if a.role == HONEST]
        n, k = settings.n_agents, settings.adversaries
        judge = settings.judge
        ctx.meta.update(
            {
                "agents": [{"name": a.name, "role": a.role} for a in agents],
                "adversaries": [a.name for a in agents if a.role == ADVERSARY],
                "n_agents": n,
                "k": k,
                "rounds": settings.rounds,
                "judge": None if judge is None else judge.label_name,
            }
        )
        if group.hears is not None or settings.placement != "first":
            ctx.meta["topology"] = group.topology
        if settings.models or settings.assignment == "by_role":
            ctx.meta["models"] = {m.name: m.model for m in group.members}
        if settings.intervention != "none":
            ctx.meta["intervention"] = {
                "kind": settings.intervention,
                "correction_round": settings.correction_round
                if settings.intervention == "early_correction"
                else None,
                "checker": next((m.name for m in group.members if m.checker), None),
            }
        room = ctx.room(
            agents,
            memory_rounds=settings.memory_rounds,
            order=settings.order,
            opening=self.template("opening.txt").format(question=fact.question).strip(),
            preamble=self.template("preamble.txt").format(question=fact.question).strip(),
            hears=group.hears,
        )
        correction = self.template("early_correction.txt").strip()
        inline = _InlineJudge.of(ctx, settings, fact)
        probes = _Prober(self, ctx, room, honest, settings, fact, inline)
        turn = self.template("turn.txt")
        reask_at = set(self._reask_checkpoints(ctx.spec.item, settings))
        off_the_record = probes.off_the_record(self, fact) if settings.off_the_record else None
        probes.ask(MAIN_PROBE)
        for round_number in range(1, settings.rounds + 1):
            before = list(room.transcript)
            events = await room.run_round(
                turn.format(round=round_number).strip(), off_the_record=off_the_record
            )
            if inline is not None:
                inline.public(events, before)
            if (
                settings.intervention == "early_correction"
                and round_number == settings.correction_round
            ):
                room.announce(correction, name="intervention")
            probes.ask(MAIN_PROBE)
            if round_number in reask_at:
                for variant in REASK_VARIANTS:
                    probes.ask(variant)
        awareness = self.template("awareness.txt").strip()
        ask_awareness(ctx, room, honest, awareness, str(self.manipulation), settings)
        await ctx.drain()

    # analysis -------------------------------------------------------------------------------
    def order_answers(self, tables: RunTables) -> pd.DataFrame:
        """Private answers against the speaking order of the round before (see `_order`)."""
        from backchannel.paradigms.peer_pressure._order import order_answers

        return order_answers(tables, default_judge(tables))

    def metrics(self, tables: RunTables, options: AnalysisOptions) -> PeerPressureMetrics:
        from backchannel.paradigms.peer_pressure._metrics import compute_metrics

        judge = options.judge or default_judge(tables)
        return compute_metrics(tables, judge, options.second_judge)

    def contrasts(self, levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
        """`fpi_gap`: FPI at k = 1 minus k = 0 (where the design has both)."""
        from backchannel.paradigms.peer_pressure._contrasts import contrasts

        return contrasts(levels, default_judge)

    def stance_pairs(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Each honest turn's endorsement beside the speaker's private answer after the round
        (or off the record), for the kit's divergence measures (docs/divergence.md)."""
        return stance_pairs(tables, options.judge or default_judge(tables))

    def opinion_trajectories(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Whether each honest agent holds (private) and says (public) the pushed false answer,
        per checkpoint, with its neighbours' expressed mean (see `_trajectories`)."""
        from backchannel.paradigms.peer_pressure._trajectories import opinion_trajectories

        return opinion_trajectories(tables, options.judge or default_judge(tables))

    def report(self, tables: RunTables, metrics: PeerPressureMetrics, report: Report) -> None:
        from backchannel.paradigms.peer_pressure._report import build_report

        build_report(tables, metrics, report)

    def relabelled(self, tables: RunTables, judge_a: str, judge_b: str) -> Relabelling:
        """FPI re-weighted by P(B = manipulated | A's label)."""
        from backchannel.paradigms.peer_pressure._agreement import fpi_relabelling

        return fpi_relabelling(tables, judge_a, judge_b)


def default_judge(tables: RunTables) -> str:
    """The inline judge the experiment configured, else the only judge with labels."""
    settings = tables.manifest.get("config_resolved", {}).get("settings", {})
    configured = (settings.get("judge") or {}) if isinstance(settings, dict) else {}
    name = configured.get("name") or configured.get("kind")
    judges = sorted(set(tables.labels["judge"].unique().tolist())) if len(tables.labels) else []
    if name and name in judges:
        return str(name)
    if len(judges) == 1:
        return str(judges[0])
    if not judges:
        raise ConfigError(
            "the run has no judge labels; add some with `backchannel judge RUN --judge rule --as "
            "rule`, or configure an inline judge"
        )
    raise ConfigError(f"the run has labels of several judges ({', '.join(judges)}); pick --judge")


class _InlineJudge:
    """Labels a conversation's honest answers and turns beside it (`ctx.spawn`), never between
    its turns."""

    def __init__(self, ctx: ConversationContext, judge: Judge, name: str, fact: FactItem) -> None:
        self.ctx, self.judge, self.name, self.fact = ctx, judge, name, fact

    @classmethod
    def of(
        cls, ctx: ConversationContext, settings: PeerPressureSettings, fact: FactItem
    ) -> _InlineJudge | None:
        if settings.judge is None:
            return None
        model = settings.judge.model if settings.judge.kind == "llm" else "rule"
        judge = make_judge(str(model), max_tokens=settings.judge.max_tokens)
        return cls(ctx, judge, settings.judge.label_name, fact)

    def private(self, task: asyncio.Task[Event]) -> None:
        """Judge a probe's answer once it arrives (a failed probe is counted, not judged)."""

        async def label() -> None:
            event = await task
            if event.status == "ok":
                await self._judge(event, FACT_PRIVATE, ())

        self.ctx.spawn(label())

    def public(self, events: list[Event], before: list[Entry]) -> None:
        """Judge the round's honest turns, each with the CONTEXT_TURNS messages before it."""
        shown = [ContextTurn(e.speaker, e.text) for e in before]
        for event in events:
            if event.role == HONEST and event.status == "ok":
                context = tuple(shown[-CONTEXT_TURNS:])
                self.ctx.spawn(self._judge(event, FACT_PUBLIC, context))
            if event.status == "ok" or event.text:
                shown.append(ContextTurn(event.agent, event.text))

    async def _judge(self, event: Event, task: JudgeTask, context: tuple[ContextTurn, ...]) -> None:
        await judge_event(self.ctx, self.judge, event, self.name, task, self.fact, context)


class _Prober:
    """The private probes of one conversation: the main series and the re-ask variants."""

    def __init__(
        self,
        paradigm: PeerPressure,
        ctx: ConversationContext,
        room: Room,
        honest: list[Agent],
        settings: PeerPressureSettings,
        fact: FactItem,
        inline: _InlineJudge | None,
    ) -> None:
        self.room, self.honest, self.inline = room, honest, inline
        self.anonymous = settings.reask.anonymous_name
        self.settings = GenerationSettings(
            temperature=settings.probe_temperature, max_tokens=settings.probe_max_tokens
        )
        question = fact.question
        probe = paradigm.template("probe.txt").format(question=question).strip()
        own = paradigm.template("reask_self.txt").format(question=question).strip()
        group = paradigm.template("reask_group.txt").format(question=question).strip()
        self.questions = {
            MAIN_PROBE: probe,
            "reask_original": probe,
            "reask_self": own,
            "reask_self_anonymous": own,
            "reask_group": group,
        }

    def off_the_record(self, paradigm: PeerPressure, fact: FactItem) -> OffTheRecord:
        """Each honest speaker's private answer right after its turn, asked and judged as the
        main probe is."""
        question = paradigm.template("off_the_record.txt").format(question=fact.question)
        return OffTheRecord(
            question.strip(),
            settings=self.settings,
            agents=frozenset(a.name for a in self.honest),
            asked=None if self.inline is None else self.inline.private,
        )

    def ask(self, name: str) -> None:
        """Probe every honest agent at the room's current checkpoint."""
        self_name = self.anonymous if name == "reask_self_anonymous" else "You"
        tasks = self.room.checkpoint(
            self.questions[name],
            agents=self.honest,
            name=name,
            settings=self.settings,
            self_name=self_name,
        )
        if self.inline is not None:
            for task in tasks:
                self.inline.private(task)
