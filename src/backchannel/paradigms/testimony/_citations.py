"""Claims and citations of public statements: the markup `[T:Name]` / `[S:Name@R1]` and the
checks every extracted claim must pass (a known source the speaker received, an earlier round,
not oneself).

One citation is one atomic claim. Tag letters, names and round labels are matched without
regard to case (`[t:owen]` cites Owen's testimony). A claim supports the last container named
in the sentence that holds its citation; a citation that opens a sentence naming no container
("... is in the blue_pantry. [T:Elizabeth]") supports what the sentence before supports.
Invalid citations are kept with their reason, so they are counted, never silently dropped.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from backchannel.paradigms.testimony._phases import round_of

SourceKind = Literal["testimony", "statement"]
# Why a citation does not count: its form, its source, or its place in time.
REASONS = ("malformed", "unknown_source", "not_received", "self", "later_round", "repeated")

_MARK = re.compile(r"\[\s*([TS])\s*:([^\[\]\n]*)(\])?", re.IGNORECASE)
_NAME = r"([A-Za-z][A-Za-z0-9_-]*)"
_TESTIMONY = re.compile(rf"^\s*{_NAME}\s*$")
_STATEMENT = re.compile(rf"^\s*{_NAME}\s*@\s*([RO][1-9][0-9]*)\s*$", re.IGNORECASE)
_LETTER = re.compile(r"[A-Za-z]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Claim:
    """One cited source: a role's testimony, or a role's statement of an earlier round."""

    kind: SourceKind
    source: str
    round: str | None  # the cited statement's round label (R1, O2, ...); None for testimony
    supports: str | None

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.kind, self.source, self.round)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "round": self.round,
            "supports": self.supports,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        kind = data["kind"]
        if kind not in ("testimony", "statement"):
            raise ValueError(f"unknown source kind {kind!r}")
        return cls(kind, str(data["source"]), data.get("round"), data.get("supports"))


@dataclass(frozen=True, slots=True)
class Invalid:
    """A citation that is not a claim, with its text and one of REASONS."""

    text: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Extraction:
    """The claims of one statement and the citations that did not count."""

    claims: tuple[Claim, ...]
    invalid: tuple[Invalid, ...]

    def label(self) -> str:
        """The stored label: canonical JSON, so two extractors agree exactly when equal."""
        return json.dumps(
            {
                "claims": [c.as_dict() for c in self.claims],
                "invalid": [i.as_dict() for i in self.invalid],
            },
            sort_keys=True,
        )

    @classmethod
    def from_label(cls, text: str) -> Extraction:
        data = json.loads(text)
        return cls(
            tuple(Claim.from_dict(c) for c in data["claims"]),
            tuple(Invalid(i["text"], i["reason"]) for i in data["invalid"]),
        )


@dataclass(frozen=True, slots=True)
class Context:
    """What a statement could cite: who sent testimony, who spoke in which round."""

    speaker: str
    round: str  # the statement's own round label
    senders: frozenset[str]
    spoken: frozenset[tuple[str, str]]  # (agent, round label) of every statement of the run
    containers: tuple[str, ...]
    received: frozenset[str] | None = None  # senders whose testimony reached the speaker
    # (None: every sender's, for runs that did not record who received what)

    def canonical(self, name: str) -> str:
        """The name as the story spells it, matched without regard to case."""
        known = self.senders | {agent for agent, _ in self.spoken} | {self.speaker}
        found = [k for k in known if k.casefold() == name.casefold()]
        return found[0] if len(found) == 1 else name


@functools.lru_cache(maxsize=1024)
def _container_pattern(container: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[_\s]+", container) if w]
    return re.compile(r"\b" + r"[_\s]+".join(words) + r"\b", re.IGNORECASE)


def supported_endpoint(sentence: str, containers: Iterable[str]) -> str | None:
    """The last container named in `sentence` ("from A to B" supports B), else None."""
    best: tuple[int, str] | None = None
    for container in containers:
        for match in _container_pattern(container).finditer(sentence):
            if best is None or match.start() > best[0]:
                best = (match.start(), container)
    return best[1] if best else None


def _sentences(text: str) -> list[str]:
    """The sentences of `text`, split after . ! ? and at line breaks."""
    return _SENTENCE_END.split(text)


def check_claim(claim: Claim, context: Context) -> str | None:
    """The reason a well-formed claim does not count here, or None if it does."""
    if claim.kind == "testimony":
        if claim.source not in context.senders:
            return "unknown_source"
        if context.received is not None and claim.source not in context.received:
            return "not_received"  # a direct message to someone else
        return None
    assert claim.round is not None
    if claim.source == context.speaker:
        return "self"
    try:
        cited, own = round_of(claim.round), round_of(context.round)
    except ValueError:
        return "malformed"
    if cited >= own:
        return "later_round"
    if (claim.source, claim.round) not in context.spoken:
        return "unknown_source"
    return None


def validate(found: Iterable[tuple[str, Claim | None]], context: Context) -> Extraction:
    """Keep the claims that count, in order; a source cited again is `repeated`."""
    claims: list[Claim] = []
    invalid: list[Invalid] = []
    seen: set[tuple[str, str, str | None]] = set()
    for text, claim in found:
        reason = "malformed" if claim is None else check_claim(claim, context)
        if claim is not None and reason is None and claim.key in seen:
            reason = "repeated"
        if reason is not None or claim is None:
            invalid.append(Invalid(text, reason or "malformed"))
            continue
        seen.add(claim.key)
        claims.append(claim)
    return Extraction(tuple(claims), tuple(invalid))


def parse_markup(text: str, context: Context) -> Extraction:
    """The claims a statement makes with `[T:Name]` and `[S:Name@R1]` citations."""
    found: list[tuple[str, Claim | None]] = []
    before: str | None = None  # what the previous sentence supports
    for sentence in _sentences(text):
        named = supported_endpoint(sentence, context.containers)
        for match in _MARK.finditer(sentence):
            mark, body = match.group(0), match.group(2)
            opens = not _LETTER.search(_MARK.sub("", sentence[: match.start()]))
            supports = before if named is None and opens else named
            claim: Claim | None = None
            if match.group(3) is not None:
                tag = match.group(1).upper()
                if tag == "T" and (t := _TESTIMONY.match(body)):
                    claim = Claim("testimony", context.canonical(t.group(1)), None, supports)
                elif tag == "S" and (s := _STATEMENT.match(body)):
                    source = context.canonical(s.group(1))
                    claim = Claim("statement", source, s.group(2).upper(), supports)
            found.append((mark, claim))
        # A sentence of citations alone passes on what the one before it supports.
        if named is not None or _LETTER.search(_MARK.sub("", sentence)):
            before = named
    return validate(found, context)


def received_by(agent: str, messages: Iterable[tuple[str, str, Collection[str]]]) -> frozenset[str]:
    """The senders whose testimony `agent` received: its own, every broadcast, and every direct
    message to it. `messages` are (sender, kind, recipients)."""
    return frozenset(
        sender
        for sender, kind, recipients in messages
        if sender == agent or kind == "broadcast" or agent in recipients
    )


def context_for(
    speaker: str,
    round_label: str,
    senders: Collection[str],
    spoken: Collection[tuple[str, str]],
    containers: Iterable[str],
    received: Collection[str] | None = None,
) -> Context:
    return Context(
        speaker,
        round_label,
        frozenset(senders),
        frozenset(spoken),
        tuple(containers),
        None if received is None else frozenset(received),
    )
