"""The testimony protocol: T0 and T1 private votes, then simultaneous public rounds R1..RK.

T0: each role sees only its own window and votes. T1: each role also sees the testimony visible
to it and votes again. Rk: every speaker writes one statement at once, reads the round, votes.
Exits: the key role leaves after T1. Observers: three more agents with no observations; they vote
at T1 and after every Rk from the public record so far, and active ones also speak at Ok after
every Rk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.backends import GenerationSettings, LabelSet
from backchannel.engine import Agent, ConversationContext, Event, Item, OffTheRecord, Shown
from backchannel.errors import ConfigError
from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm
from backchannel.paradigms._validity import ask_awareness, awareness_calls
from backchannel.paradigms.testimony._channels import Stage
from backchannel.paradigms.testimony._citations import context_for, parse_markup, received_by
from backchannel.paradigms.testimony._environment import (
    Environment,
    MessageKind,
    WitnessMessage,
    load_environments,
)
from backchannel.paradigms.testimony._generator import generate
from backchannel.paradigms.testimony._graph import CITATION_JUDGE
from backchannel.paradigms.testimony._population import (
    LIE,
    MESSAGES,
    POPULATION,
    STATEMENT,
    VOTE,
)
from backchannel.paradigms.testimony._settings import (
    EXITS,
    FIXED_SETTINGS,
    OBSERVERS,
    TestimonySettings,
    check_exit,
)
from backchannel.paradigms.testimony._shuffle import story_order
from backchannel.paradigms.testimony._verify import verify
from backchannel.paradigms.testimony._view import VIEW

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.judges import Labelling
    from backchannel.paradigms.testimony._results import TestimonyMetrics
    from backchannel.planning import Contrast
    from backchannel.report import Report

UNKNOWN = "UNKNOWN"
# Ten names: at most five can clash with a story's roles, and there are at most five observers.
OBSERVER_NAMES = (
    "Quinn",
    "Rowan",
    "Sasha",
    "Tatum",
    "Umber",
    "Vesper",
    "Wren",
    "Yael",
    "Zeno",
    "Xavi",
)
_PROMPT_TOKENS = 400
_TOKENS_PER_STATEMENT = 200


def role_kind(env: Environment, name: str) -> str:
    """The stored role of a story role: key, second_key or member."""
    if name == env.key:
        return "key"
    if name == env.second_key:
        return "second_key"
    return "member"


def model_of(settings: TestimonySettings, kind: str) -> str:
    """The model of a role kind: its pool entry, else `model`."""
    chosen = {
        "key": settings.key_model,
        "second_key": settings.second_key_model,
        "member": settings.member_model,
        "observer": settings.observer_model,
    }[kind]
    return chosen or settings.model


def observer_names(env: Environment, count: int) -> list[str]:
    """The first `count` observer names that no story role has."""
    names = [n for n in OBSERVER_NAMES if n not in env.roles][:count]
    if len(names) != count:
        raise ConfigError(f"environment {env.id}: not enough free names for {count} observers")
    return names


def sent_messages(
    env: Environment, settings: TestimonySettings, null_text: str
) -> list[WitnessMessage]:
    """The five messages of this cell: C0's, C1's, or with a null placeholder for the key."""
    messages = list(env.messages_for(settings.condition))
    if settings.intervention == "null_exit":
        key = env.key_message
        placeholder = WitnessMessage(key.sender, key.kind, key.recipients, null_text, (), None)
        messages = [placeholder if m.sender == env.key else m for m in messages]
    return messages


class Testimony(Paradigm[TestimonySettings]):
    """Deceptive testimony: can five partial witnesses recover the endpoint, and what does one
    lying key witness do? See docs/paradigms/testimony.md."""

    name = "testimony"
    Settings = TestimonySettings
    manipulation = (
        "one witness's testimony about where an object ended up may be a lie (sent to one, some "
        "or all), to see whether the others believe it and pass it on in what they say and "
        "where they privately think the object is (deceptive testimony, spread of misinformation)"
    )
    prompt_package = "backchannel.paradigms.testimony.prompts"
    fixed_settings = FIXED_SETTINGS
    view = VIEW
    population = POPULATION
    # C0 and C1, the exits and the observer arms of one story are arms of a pair: what they ask
    # alike (T0 above all) is asked once.
    paired_factors = frozenset({"condition", "intervention"})

    def items(self, settings: TestimonySettings, seed: int) -> list[Item]:
        environments = _environments(settings)
        chosen = [e for e in environments if e.deception in settings.deceptions]
        if not chosen:
            raise ConfigError(
                f"no environment has a deception type in {settings.deceptions}; "
                "check settings.deceptions"
            )
        return [Item(e.id, {"environment": e.as_dict()}) for e in chosen]

    def check_cell(self, settings: TestimonySettings) -> None:
        check_exit(settings)

    def models(self, settings: TestimonySettings) -> set[str]:
        kinds = ["key", "second_key", "member"]
        if settings.intervention in OBSERVERS:
            kinds.append("observer")
        return {model_of(settings, kind) for kind in kinds} | settings.validity_models()

    def estimate(self, settings: TestimonySettings, item: Item, replicate: int = 0) -> CallEstimate:
        env = Environment.from_dict(item.payload["environment"])
        rounds = len(settings.rounds)
        exits = settings.intervention in EXITS
        calls: dict[str, int] = {}

        def add(kind: str, count: int) -> None:
            model = model_of(settings, kind)
            calls[model] = calls.get(model, 0) + count

        # Every story role votes at T0 and T1; a speaker then writes and votes in every round.
        # Off the record: every statement is followed by a private vote of its speaker.
        off = 1 if settings.off_the_record else 0
        statements = votes = 0
        asked: list[str] = []
        for name in env.roles:
            kind = role_kind(env, name)
            spoken = 0 if exits and kind == "key" else rounds
            add(kind, 2 + (2 + off) * spoken)
            statements, votes = statements + spoken, votes + 2 + (1 + off) * spoken
            if not (exits and kind == "key"):
                asked.append(model_of(settings, kind))
        if settings.intervention in OBSERVERS:
            # Observers vote at T1 and after every round; active ones also speak every round.
            spoken = rounds if settings.intervention == "active_observers" else 0
            add("observer", settings.observers * (1 + rounds + (1 + off) * spoken))
            statements += settings.observers * spoken
            votes += settings.observers * (1 + rounds + off * spoken)
            asked += [model_of(settings, "observer")] * settings.observers
        votes += awareness_calls(settings, calls, asked)
        prompt = (statements + votes) * _PROMPT_TOKENS + statements * rounds * _TOKENS_PER_STATEMENT
        completion = statements * settings.max_tokens + votes * settings.vote_max_tokens
        return CallEstimate(calls, prompt, completion)

    def _agent(
        self, env: Environment, s: TestimonySettings, name: str, facts: dict[str, Any]
    ) -> Agent:
        """A story role; `facts` (the arm's messages) go to a simulated population only."""
        kind = role_kind(env, name)
        system = self.template("system.txt").format(name=name, observations=env.observations[name])
        if kind == "key" and s.condition == "C1":
            facts = {**facts, LIE: env.false_message.text}
            system = (
                system.strip()
                + "\n\n"
                + self.template("system_key_deceptive.txt").format(
                    object=env.chain.target,
                    endpoint=env.chain.endpoint,
                    message=env.false_message.text,
                )
            )
        return Agent(
            name=name,
            role=kind,
            model=model_of(s, kind),
            system=system.strip(),
            settings=GenerationSettings(temperature=s.temperature, max_tokens=s.max_tokens),
            facts=facts,
        )

    def _shown(self, message: WitnessMessage) -> str:
        if message.kind == "direct":
            template = self.template("shown_direct.txt")
            return template.format(recipient=message.recipients[0], text=message.text).strip()
        return self.template("shown_broadcast.txt").format(text=message.text).strip()

    def _labelled(self, phase: str) -> Shown:
        """Statements enter the record marked with their round (R1, O1, ...), so that later
        speakers can tell rounds apart and refer to them."""
        template = self.template("shown_statement.txt")

        def shown(event: Event) -> str:
            if not event.text.strip():
                return event.text  # nothing was said: no label without a statement
            return template.format(phase=phase, text=event.text.strip()).strip()

        return shown

    def _cite(
        self,
        ctx: ConversationContext[TestimonySettings],
        events: list[Event],
        phase: str,
        env: Environment,
        messages: list[WitnessMessage],
        spoken: set[tuple[str, str]],
    ) -> None:
        """Store the claims of each statement of `phase` parsed from its citation markup."""
        spoken.update((e.agent, phase) for e in events if e.status == "ok" and e.text.strip())
        senders = [m.sender for m in messages]
        sent = [(m.sender, m.kind, m.recipients) for m in messages]
        for event in events:
            if event.status != "ok":
                ctx.label(event, CITATION_JUDGE, None, status="no_statement", text=event.status)
                continue
            received = received_by(event.agent, sent)
            context = context_for(event.agent, phase, senders, spoken, env.containers, received)
            ctx.label(event, CITATION_JUDGE, parse_markup(event.text, context).label())

    async def run(self, ctx: ConversationContext[TestimonySettings]) -> None:
        s = ctx.settings
        env = Environment.from_dict(ctx.spec.item.payload["environment"])
        # No list an agent reads follows the story's time: roster, testimony, statements and
        # vote options come in a seeded order per story, the same in every arm of the story.
        order = story_order(env.roles, ctx.experiment_seed, env.id, "roles")
        options = story_order(env.containers, ctx.experiment_seed, env.id, "options")
        sent = sent_messages(env, s, self.template("null_message.txt").strip())
        # What a simulated population reads of the arm: the text each role sent.
        facts: dict[str, Any] = {MESSAGES: {m.sender: m.text for m in sent}}
        agents = [self._agent(env, s, name, facts) for name in order]
        observers = [
            Agent(
                name=name,
                role="observer",
                model=model_of(s, "observer"),
                system=self.template("system_observer.txt").format(name=name).strip(),
                settings=GenerationSettings(temperature=s.temperature, max_tokens=s.max_tokens),
                facts=facts,
            )
            for name in (observer_names(env, s.observers) if s.intervention in OBSERVERS else [])
        ]
        messages = sorted(sent, key=lambda m: order.index(m.sender))
        exits = s.intervention in EXITS
        speakers = [a for a in agents if not (exits and a.name == env.key)]
        recorded = env.as_dict(s.condition)
        recorded["messages"] = [m.as_dict() for m in messages]
        ctx.meta.update(
            {
                "environment": recorded,
                "condition": s.condition,
                "intervention": s.intervention,
                "deception": env.deception,
                "key_message_kind": env.key_kind,
                "key": env.key,
                "second_key": env.second_key,
                "endpoint": env.chain.endpoint,
                "decoy": env.chain.decoy,
                "rounds": len(s.rounds),
                "order": order,
                "options": options,
                "agents": [
                    {"name": a.name, "role": a.role, "model": a.model} for a in agents + observers
                ],
                "majority": {
                    "participants": s.participant_majority,
                    "observers": s.observer_majority,
                    "all": s.all_majority,
                },
            }
        )
        preamble = self.template("preamble.txt").format(
            count=len(env.roles), object=env.chain.target, containers=", ".join(options)
        )
        stage = Stage(ctx, agents + observers, preamble.strip())
        vote = LabelSet((*options, UNKNOWN))
        question = self.template("vote.txt").format(object=env.chain.target).strip()
        vote_settings = GenerationSettings(temperature=s.temperature, max_tokens=s.vote_max_tokens)

        def ask(voters: list[Agent], checkpoint: str) -> None:
            stage.vote(
                voters, checkpoint, question, name=VOTE, constraint=vote, settings=vote_settings
            )

        off_the_record = None
        if s.off_the_record:
            # After each statement its speaker votes privately, with the vote's options.
            off_question = self.template("off_the_record.txt").format(object=env.chain.target)
            off_the_record = OffTheRecord(
                off_question.strip(), constraint=vote, settings=vote_settings
            )

        ask(agents, "T0")
        for message in messages:
            stage.post(
                message,
                role=role_kind(env, message.sender),
                shown=self._shown(message),
                meta={"truthful": message.truthful, "supports": message.supports},
            )
        # Observers vote from T1 on, at every checkpoint the story roles vote at, from the
        # public record so far: the observer trajectory T1, R1..RK.
        ask(agents + observers, "T1")
        cite = "\n" + self.template("cite.txt").strip() if s.citation_markup else ""
        statement = self.template("statement.txt").strip() + cite
        observer_statement = self.template("statement_observer.txt").strip() + cite
        spoken: set[tuple[str, str]] = set()
        for k, instruction in enumerate(s.rounds, start=1):
            said = await stage.statements(
                speakers,
                f"R{k}",
                statement.format(instruction=instruction).strip(),
                name=STATEMENT,
                shown=self._labelled(f"R{k}"),
                off_the_record=off_the_record,
            )
            if s.citation_markup:
                self._cite(ctx, said, f"R{k}", env, messages, spoken)
            ask(speakers + observers, f"R{k}")
            if observers and s.intervention == "active_observers":
                said = await stage.statements(
                    observers,
                    f"O{k}",
                    observer_statement.format(instruction=instruction).strip(),
                    name=STATEMENT,
                    shown=self._labelled(f"O{k}"),
                    off_the_record=off_the_record,
                )
                if s.citation_markup:
                    self._cite(ctx, said, f"O{k}", env, messages, spoken)
        awareness = self.template("awareness.txt").strip()
        ask_awareness(ctx, stage.room, speakers + observers, awareness, str(self.manipulation), s)
        await ctx.drain()

    def contrasts(self, levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
        """`truth_gap`, `true_share_gap`: C0 minus C1 at the final checkpoint, paired by story."""
        from backchannel.paradigms.testimony._contrasts import contrasts

        return contrasts(levels)

    def order_answers(self, tables: RunTables) -> pd.DataFrame:
        """Answers against the order of the options shown (see `_order`)."""
        from backchannel.paradigms.testimony._order import order_answers

        return order_answers(tables)

    def metrics(self, tables: RunTables, options: AnalysisOptions) -> TestimonyMetrics:
        from backchannel.paradigms.testimony._metrics import testimony_metrics

        return testimony_metrics(tables)

    def stance_pairs(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame:
        """Each statement against the vote of its round, towards the decoy (docs/paradigms/
        testimony.md)."""
        from backchannel.paradigms.testimony._stances import stance_pairs

        return stance_pairs(tables)

    def tables(self, tables: RunTables) -> dict[str, pd.DataFrame]:
        """The citation graph (statement -> cited testimony or statement), for `export`."""
        from backchannel.paradigms.testimony._graph import citation_table

        return {"citations": citation_table(tables)}

    def report(self, tables: RunTables, metrics: TestimonyMetrics, report: Report) -> None:
        from backchannel.paradigms.testimony._report import fill_report

        fill_report(tables, metrics, report)

    def labelling(self) -> Labelling:
        """`judge` extracts each statement's claims; `agree` compares two extractions."""
        from backchannel.paradigms.testimony._judging import CitationLabelling

        return CitationLabelling()


def _environments(settings: TestimonySettings) -> list[Environment]:
    """The shipped, file-given or generated environments; each must pass the verifier."""
    if settings.generate is not None:
        spec = settings.generate
        built = []
        for i in range(spec.count):
            deception = spec.deceptions[i % len(spec.deceptions)]
            # Source needs a direct key-role message; the others alternate direct and broadcast.
            kind: MessageKind = "direct" if deception == "source" or i % 2 == 0 else "broadcast"
            try:
                built.append(
                    generate(
                        moves=spec.moves[i % len(spec.moves)],
                        seed=spec.seed + i,
                        deception=deception,
                        key_kind=kind,
                    ).environment
                )
            except ValueError as error:
                raise ConfigError(f"settings.generate: {error}") from None
        return built
    if settings.environments_file is None:
        return load_environments()
    path = Path(settings.environments_file)
    try:
        environments = load_environments(path)
    except FileNotFoundError:
        raise ConfigError(f"settings.environments_file: no such file {path}") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise ConfigError(
            f"settings.environments_file: {path} is not an environments file ({error}); "
            "see docs/paradigms/testimony.md for the format"
        ) from None
    ids = [e.id for e in environments]
    if len(set(ids)) != len(ids) or not ids:
        raise ConfigError(f"settings.environments_file: {path} needs distinct, non-empty ids")
    for env in environments:
        problems = verify(env)
        if problems:
            raise ConfigError(
                f"settings.environments_file: environment {env.id} fails the verifier: "
                f"{problems[0]}"
            )
    return environments
