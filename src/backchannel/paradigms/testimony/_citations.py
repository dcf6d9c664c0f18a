"""Claims and citations of public statements: the markup `[T:Name]` / `[S:Name@R1]` and the
checks every extracted claim must pass (a known source, an earlier round, not oneself).

One citation is one atomic claim. A claim supports the last container named in the sentence
that holds its citation (none if the sentence names no container). Invalid citations are kept
with their reason, so they are counted, never silently dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from backchannel.paradigms.testimony._phases import round_of

SourceKind = Literal["testimony", "statement"]
# Why a citation does not count: its form, its source, or its place in time.
REASONS = ("malformed", "unknown_source", "self", "later_round", "repeated")

_MARK = re.compile(r"\[\s*([TS])\s*:([^\[\]\n]*)(\])?")
_NAME = r"([A-Za-z][A-Za-z0-9_-]*)"
_TESTIMONY = re.compile(rf"^\s*{_NAME}\s*$")
_STATEMENT = re.compile(rf"^\s*{_NAME}\s*@\s*([RO][1-9][0-9]*)\s*$")
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
        return None if claim.source in context.senders else "unknown_source"
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
    for sentence in _sentences(text):
        for match in _MARK.finditer(sentence):
            mark, body = match.group(0), match.group(2)
            supports = supported_endpoint(sentence, context.containers)
            claim: Claim | None = None
            if match.group(3) is not None:
                if match.group(1) == "T" and (t := _TESTIMONY.match(body)):
                    claim = Claim("testimony", t.group(1), None, supports)
                elif match.group(1) == "S" and (s := _STATEMENT.match(body)):
                    claim = Claim("statement", s.group(1), s.group(2), supports)
            found.append((mark, claim))
    return validate(found, context)


def context_for(
    speaker: str,
    round_label: str,
    senders: Collection[str],
    spoken: Collection[tuple[str, str]],
    containers: Iterable[str],
) -> Context:
    return Context(speaker, round_label, frozenset(senders), frozenset(spoken), tuple(containers))
