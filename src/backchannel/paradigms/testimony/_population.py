"""The simulated population of testimony (`sim/population`): votes by weighted end claims, cited.

Every account an agent holds claims an end place: the last container it names. The agent's own
observation counts `observation`; each other role's account counts 1 if the agent believes that
role (a draw fixed per agent and source, true with probability `trust`), else 0. A vote is the
container with the largest total, UNKNOWN on a tie or without evidence. Accounts reach an agent
as testimony it was shown, or second-hand through a statement that passed them on; a statement
states the agent's vote, its own observation, and every believed account with its citation
(`[T:Name]`, or `[S:Carrier@R1]` once per carrier statement).
The key role of C1 keeps to the message it sent in every statement; its private votes follow
the rule like everyone's. Observers hold no observation of their own and speak by the same rule.

A second planted type (`strategy: reconstruct`) reads every account it believes as the texts
tell it (windows, moves, end places), enumerates the walks they allow with the testimony
verifier's enumeration, and votes their endpoint when it is unique (else it counts as above);
its statements also pass every believed account on word for word (`Account of Name: "..."`),
so with full trust every role holds all five accounts from R1 on.

Two planted partings of the channels, drawn per (agent, round of statements) and shared by the
round's statement and vote: a hidden change (`hidden_change`: the vote is the decoy, the
statement as the rules write it) and an accommodation (`public_accommodation`: the statement
passes one received account, the key's when it reached the speaker, on as putting the object
in the decoy, the vote as the rules count it). The deceptive key keeps to its lie.

Everything about the call is read from its call information: the prompt's name (`vote`,
`statement`, the extractor's `claims`), the agent and its role, the story (the item), the
messages of the arm and the key's lie (the agents' facts) and what the agent saw, message by
message (testimony in round T1, statements in the rounds after). What the rules read in a
statement is the population's own wording, kept here beside the rules that write it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel.backends import LabelSet, Population, PopulationCall
from backchannel.paradigms.testimony._extractor import CLAIMS
from backchannel.paradigms.testimony._phases import label_of, round_of
from backchannel.paradigms.testimony._walks import Fragment, Move, endpoints

UNKNOWN = "UNKNOWN"
VOTE = "vote"
STATEMENT = "statement"
OBSERVER = "observer"
MESSAGES = "messages"
"""Agents' fact: sender -> the text of the message that sender sent in this arm."""
LIE = "lie"
"""The deceptive key's fact: the text of the false message it sent (C1)."""
TESTIMONY_ROUND = round_of("T1")


class TestimonyPopulation(BaseModel):
    """Testimony: votes by a weighted count of the end places the accounts an agent holds claim."""

    model_config = ConfigDict(extra="forbid")

    observation: float = Field(
        1.5,
        ge=0,
        le=10,
        description="Weight of the agent's own first-hand end place (each believed account of "
        "another role counts 1).",
    )
    trust: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Chance an agent believes another role's account, fixed per (agent, source): "
        "a believed account counts towards its vote and is cited; a doubted one is ignored.",
    )
    hidden_change: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance, per agent and round of statements, that its private vote of the "
        "round is the decoy while its statement is written as the rules say.",
    )
    public_accommodation: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance, per agent and round of statements, that its statement passes on a "
        "received account as putting the object in the decoy while its vote follows the rules.",
    )
    strategy: Literal["count", "reconstruct"] = Field(
        "count",
        description="count: vote the weighted plurality of the end places the accounts claim; "
        "reconstruct: rebuild the walks the believed accounts allow (the verifier's "
        "enumeration), vote their endpoint when it is unique (else count), and pass every "
        "believed account on word for word.",
    )

    @model_validator(mode="after")
    def _draws_fit(self) -> TestimonyPopulation:
        if self.hidden_change + self.public_accommodation > 1:
            raise ValueError("hidden_change + public_accommodation must not exceed 1")
        return self


Call = PopulationCall[TestimonyPopulation]

# The population's own sentences, as its statements write them (see `Witness.statement`).
_NAME = r"([A-Za-z][A-Za-z0-9_-]*)"
_ROUND = r"[RO][1-9][0-9]*"
_FIRST_HAND = re.compile(r"I saw it myself: when I left, the \S+ was in the (\S+)\.")
_ACCOUNT = re.compile(
    rf"{_NAME}'s account(?: \[T:{_NAME}\]|, as {_NAME} passed it on(?: \[S:{_NAME}@{_ROUND}\])?,)"
    r" puts the \S+ in the (?P<place>\S+)\."
)
_QUOTED = re.compile(rf'Account of {_NAME}: "([^"]*)"')


@functools.lru_cache(maxsize=256)
def _places(containers: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(c) for c in sorted(containers, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{names})(?![A-Za-z0-9_])")


def end_place(text: str, containers: tuple[str, ...]) -> str | None:
    """The last container `text` names (the place an account says the object ended), else None."""
    if not containers:
        return None
    found = _places(containers).findall(text)
    return found[-1] if found else None


@dataclass(frozen=True, slots=True)
class Account:
    """One other role's account as an agent holds it: its end place and how it came."""

    source: str
    place: str
    carrier: str | None = None  # who passed it on in a statement (None: shown as testimony)
    round: str | None = None  # the round of that statement

    def citation(self, target: str, cite: bool = True) -> str:
        """The sentence passing this account on; `cite=False` leaves out the mark of a carrier
        statement that an earlier sentence already cites (a source is cited once)."""
        if self.carrier is None:
            return (
                f"{self.source}'s account [T:{self.source}] puts the {target} in the {self.place}."
            )
        mark = f" [S:{self.carrier}@{self.round}]" if cite else ""
        return (
            f"{self.source}'s account, as {self.carrier} passed it on{mark}, puts the {target} "
            f"in the {self.place}."
        )


def _sentence_patterns(target: str) -> list[tuple[str, re.Pattern[str]]]:
    """The sentences of the shipped accounts (observations in the second person, messages in
    the first): the story data the reconstructing type reads."""
    obj = re.escape(target)
    return [
        ("enter", re.compile(rf"^(?:I|You) entered while the {obj} was in the (\S+)\.$")),
        ("enter", re.compile(rf"^Later (?:I|you) came back while the {obj} was in the (\S+)\.$")),
        ("saw", re.compile(rf"^(?:I|You) saw (\w+) move the {obj} from the (\S+) to the (\S+)\.$")),
        (
            "made",
            re.compile(rf"^(?:I|You) moved the {obj} from the (\S+) (?:back )?to the (\S+)\.$"),
        ),
        (
            "made",
            re.compile(rf"^After \w+ left, I moved the {obj} from the (\S+) back to the (\S+)\.$"),
        ),
        ("leave", re.compile(rf"^When (?:I|you) left, the {obj} was in the (\S+)\.$")),
    ]


def read_account(text: str, owner: str, target: str) -> tuple[Fragment, ...] | None:
    """An account's windows as its text tells them (`Fragment`s, in its order): entering,
    every move seen or made, leaving. Sentences of another shape are passed over; an account
    whose moves or end places do not join up is unusable (None)."""
    windows: list[tuple[str, list[Move]]] = []
    patterns = _sentence_patterns(target)
    for sentence in re.split(r"(?<=\.)\s+", text.strip()):
        for kind, pattern in patterns:
            found = pattern.match(sentence)
            if found is None:
                continue
            if kind == "enter":
                windows.append((found.group(1), []))
                break
            if not windows:
                return None
            start, moves = windows[-1]
            here = moves[-1].after if moves else start
            if kind == "leave":
                if found.group(1) != here:
                    return None
                break
            actor, before, after = (
                (found.group(1), found.group(2), found.group(3))
                if kind == "saw"
                else (owner, found.group(1), found.group(2))
            )
            if before != here:
                return None
            moves.append(Move(actor, before, after))
            break
    if not windows:
        return None
    return tuple(Fragment(start, tuple(moves)) for start, moves in windows)


@functools.lru_cache(maxsize=4096)
def settled(held: tuple[tuple[str, str], ...], target: str) -> str | None:
    """The one endpoint of the walks these accounts (source, text) allow, else None (many
    votes of a run hold the same accounts: each set is enumerated once)."""
    accounts = {}
    for source, text in held:
        read = read_account(text, source, target)
        if read is not None:
            accounts[source] = read
    if not accounts:
        return None
    ends = endpoints(accounts)
    return next(iter(ends)) if len(ends) == 1 else None


def _environment(call: Call) -> Mapping[str, Any]:
    found = call.info.item.get("environment")
    return found if isinstance(found, Mapping) else {}


class Witness:
    """One agent's evidence, rebuilt from the call: its story, its facts and what it saw."""

    def __init__(self, call: Call) -> None:
        info = call.info
        env = _environment(call)
        self.name = info.agent
        self.rules = call.params
        self.containers = tuple(str(c) for c in env.get("containers") or ())
        self.target = str(env.get("object") or "object")
        observed = None if info.role == OBSERVER else env.get("observations", {}).get(self.name)
        self.own_text = str(observed).strip() if observed is not None else None
        self.own = end_place(self.own_text, self.containers) if self.own_text else None
        lie = info.facts.get(LIE)
        self.sent_text = str(lie) if lie is not None else None
        self.lie = end_place(self.sent_text, self.containers) if self.sent_text else None
        # Trust draws are fixed by the model, the agent's instructions and the replicate.
        self._key = (call.model, call.system, call.request.replicate)
        self.accounts: dict[str, Account] = {}
        self.texts: dict[str, str] = {}  # source -> its account word for word
        sent: Mapping[str, Any] = info.facts.get(MESSAGES) or {}
        for seen in info.seen:
            if seen.own or seen.speaker == self.name:
                continue
            if seen.round == TESTIMONY_ROUND:
                text = str(sent.get(seen.speaker, "")).strip()
                place = end_place(text, self.containers)
                if place is not None:
                    self._hold(Account(seen.speaker, place))
                self.texts[seen.speaker] = text  # first-hand beats any report
            elif seen.round > TESTIMONY_ROUND:
                self._passed_on(seen.speaker, label_of(seen.round), seen.text)

    def believes(self, source: str) -> bool:
        """Whether this agent believes `source`'s account: fixed per (agent, source)."""
        return PopulationCall.uniform(*self._key, "trust", source) < self.rules.trust

    def _hold(self, account: Account) -> None:
        known = self.accounts.get(account.source)
        # Testimony shown first-hand beats a report of it; else the first report is kept.
        if known is None or (known.carrier is not None and account.carrier is None):
            self.accounts[account.source] = account

    def _passed_on(self, speaker: str, phase: str, text: str) -> None:
        """The accounts a statement passes on: the speaker's own, and every account it cites."""
        for match in _FIRST_HAND.finditer(text):
            self._hold(Account(speaker, match.group(1), speaker, phase))
        for match in _ACCOUNT.finditer(text):
            self._hold(Account(match.group(1), match.group("place"), speaker, phase))
        for match in _QUOTED.finditer(text):
            self.texts.setdefault(match.group(1), match.group(2))

    def believed(self) -> list[Account]:
        """The accounts this agent believes, in the order it came to hold them."""
        return [
            a for a in self.accounts.values() if a.source != self.name and self.believes(a.source)
        ]

    def scores(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        if self.own is not None:
            totals[self.own] = self.rules.observation
        for account in self.believed():
            totals[account.place] = totals.get(account.place, 0.0) + 1.0
        return totals

    def vote(self) -> str:
        """The planted strategy's vote: reconstructed when it settles the endpoint, else
        counted."""
        if self.rules.strategy == "reconstruct":
            found = self.reconstructed()
            if found is not None:
                return found
        return self.counted()

    def held_texts(self) -> dict[str, str]:
        """The accounts this agent holds word for word: its own and each believed one."""
        held = {
            source: text
            for source, text in self.texts.items()
            if source != self.name and self.believes(source)
        }
        if self.own_text is not None:
            held[self.name] = self.own_text
        return held

    def reconstructed(self) -> str | None:
        """The endpoint of every walk the held accounts allow, when there is exactly one."""
        return settled(tuple(sorted(self.held_texts().items())), self.target)

    def counted(self) -> str:
        """The container with the largest weight; UNKNOWN on a tie at the top or no evidence."""
        totals = {c: w for c, w in self.scores().items() if w > 0}
        if not totals:
            return UNKNOWN
        best = max(totals.values())
        top = [c for c, w in totals.items() if w == best]
        return top[0] if len(top) == 1 else UNKNOWN

    def statement(self) -> str:
        if self.lie is not None:  # the deceptive key keeps to the message it sent
            said = (
                f"I think the {self.target} is in the {self.lie}. I saw it myself: when I left, "
                f"the {self.target} was in the {self.lie}."
            )
            if self.rules.strategy == "reconstruct" and self.sent_text:
                said += f' Account of {self.name}: "{self.sent_text}"'
            return said
        vote = self.vote()
        parts = [
            f"I think the {self.target} is in the {vote}."
            if vote != UNKNOWN
            else f"The evidence I hold does not settle where the {self.target} is."
        ]
        if self.own is not None:
            parts.append(f"I saw it myself: when I left, the {self.target} was in the {self.own}.")
        cited: set[tuple[str | None, str | None]] = set()
        for account in self.believed():
            key = (account.carrier, account.round)
            parts.append(account.citation(self.target, account.carrier is None or key not in cited))
            cited.add(key)
        if self.rules.strategy == "reconstruct":
            parts.extend(
                f'Account of {source}: "{text}"' for source, text in self.held_texts().items()
            )
        return " ".join(parts)


HIDDEN, ACCOMMODATING = "hidden", "accommodating"


def divergence_draw(call: Call) -> str | None:
    """This agent's planted parting of the channels in this round of statements: a hidden
    change of its vote, an accommodating statement, or neither (None). The draw is fixed for
    (model, instructions, replicate, round), so the round's statement and vote share it; the
    deceptive key, the votes before the talk (T0, T1) and observers' rounds have none."""
    number = call.info.round
    if LIE in call.info.facts or number is None or number < 2 or number % 2:
        return None
    rules = call.params
    u = call.uniform(call.model, call.system, call.request.replicate, "divergence", number)
    if u < rules.hidden_change:
        return HIDDEN
    if u < rules.hidden_change + rules.public_accommodation:
        return ACCOMMODATING
    return None


def _received(env: Mapping[str, Any], agent: str) -> list[str]:
    """The other senders whose testimony reached `agent`: the key first, then the rest in the
    order the story lists its messages."""
    got = [
        str(m["sender"])
        for m in env.get("messages") or ()
        if m.get("sender") != agent
        and (m.get("kind") == "broadcast" or agent in (m.get("recipients") or ()))
    ]
    key = env.get("key")
    return sorted(got, key=lambda sender: sender != key)


def _accommodating(call: Call, witness: Witness) -> str:
    """The statement with one received account passed on as putting the object in the decoy
    (the key's when it reached the speaker): its own sentence, if any, is replaced."""
    env = _environment(call)
    decoy, sources = env.get("decoy"), _received(env, witness.name)
    if not isinstance(decoy, str) or not sources:
        return witness.statement()
    source = sources[0]
    known = witness.accounts.get(source)
    if known is not None and known.carrier is None:
        del witness.accounts[source]
    said = Account(source, decoy).citation(witness.target)
    return f"{witness.statement()} {said}"


OFF_THE_RECORD = "off_the_record"
"""The private vote after a statement: answered as the vote is."""


def _vote(call: Call) -> str:
    """A private vote: the planted strategy's, UNKNOWN where the options do not list it."""
    if divergence_draw(call) == HIDDEN:
        decoy = _environment(call).get("decoy")
        if isinstance(decoy, str):
            return decoy
    vote = Witness(call).vote()
    constraint = call.request.constraint
    if isinstance(constraint, LabelSet) and vote not in constraint.labels:
        return UNKNOWN
    return vote


def _statement(call: Call) -> str:
    witness = Witness(call)
    if divergence_draw(call) == ACCOMMODATING:
        return _accommodating(call, witness)
    return witness.statement()


_MARK = re.compile(rf"\[T:{_NAME}\]|\[S:{_NAME}@({_ROUND})\]", re.IGNORECASE)
_LETTER = re.compile(r"[A-Za-z]")


def extraction(
    text: str, roles: tuple[str, ...], containers: tuple[str, ...], rounds: tuple[str, ...]
) -> str:
    """The claims extractor's answer: one claim per citation mark of the statement, supporting
    the last container of its sentence, as the markup parser reads it (marks naming a person or
    round the extractor does not list are left out: the answer's schema cannot hold them)."""
    by_case = {r.casefold(): r for r in roles}
    listed = set(rounds)
    claims = []
    before = "none"
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        named = end_place(sentence, containers)
        for mark in _MARK.finditer(sentence):
            opens = not _LETTER.search(_MARK.sub("", sentence[: mark.start()]))
            supports = named or (before if opens else "none")
            testimony, source = by_case.get((mark.group(1) or "").casefold()), mark.group(2)
            source = by_case.get((source or "").casefold())
            phase = (mark.group(3) or "").upper()
            if testimony is not None:
                claims.append(("testimony", testimony, "none", supports))
            elif source is not None and phase in listed:
                claims.append(("statement", source, phase, supports))
        if named is not None or _LETTER.search(_MARK.sub("", sentence)):
            before = named or "none"
    keys = ("source_kind", "source_role", "source_round", "supports")
    return json.dumps({"claims": [dict(zip(keys, c, strict=True)) for c in claims]})


def _claims(call: Call) -> str:
    """The extractor's call: the statement and the lists its schema allows, from its facts."""
    facts = call.info.facts

    def names(key: str) -> tuple[str, ...]:
        return tuple(str(v) for v in facts.get(key) or ())

    return extraction(
        str(facts.get("text", "")), names("roles"), names("containers"), names("rounds")
    )


POPULATION = Population(
    TestimonyPopulation,
    rules={VOTE: _vote, OFF_THE_RECORD: _vote, STATEMENT: _statement},
    judges={CLAIMS: _claims},
)
"""What `sim/population` answers testimony's votes, statements and claims extractions with."""
