"""The LLM extractor: a model lists a free-text statement's claims as JSON under a schema.

Constrained output at temperature 0; the answer passes the same checks as the markup (a known
source, an earlier round, not oneself). An unreadable answer is stored as its failure status,
never as "no claims".
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from backchannel.analysis import RunTables
from backchannel.backends import (
    CallInfo,
    Completion,
    GenerationSettings,
    JsonSchema,
    LLMClient,
    Message,
    Request,
    UsageMeter,
    check_model,
)
from backchannel.judges import judge_seed
from backchannel.paradigms.testimony._citations import (
    Claim,
    Context,
    context_for,
    parse_markup,
    received_by,
    validate,
)
from backchannel.paradigms.testimony._graph import records
from backchannel.paradigms.testimony._phases import round_of

NONE = "none"
CLAIMS = "claims"
"""The judge task an extraction is (the kind `backchannel judge --kind` names)."""
LLM_JUDGE = "citations_llm"
_PROMPTS = "backchannel.paradigms.testimony.prompts"


def _prompt(name: str) -> str:
    return (resources.files(_PROMPTS) / name).read_text(encoding="utf-8").strip()


def claim_schema(
    roles: Sequence[str], rounds: Sequence[str], containers: Sequence[str]
) -> JsonSchema:
    """The answer's schema: {"claims": [{source_kind, source_role, source_round, supports}]}."""
    claim = {
        "type": "object",
        "properties": {
            "source_kind": {"enum": ["testimony", "statement"]},
            "source_role": {"enum": list(roles)},
            "source_round": {"enum": [*rounds, NONE]},
            "supports": {"enum": [*containers, NONE]},
        },
        "required": ["source_kind", "source_role", "source_round", "supports"],
        "additionalProperties": False,
    }
    return JsonSchema.of(
        {
            "type": "object",
            "properties": {"claims": {"type": "array", "items": claim, "maxItems": 20}},
            "required": ["claims"],
            "additionalProperties": False,
        },
        name="claims",
    )


@dataclass(frozen=True, slots=True)
class Target:
    """One statement to extract, with what it could cite."""

    conversation_id: str
    event_seq: int
    seed: int
    object: str
    roles: tuple[str, ...]
    context: Context
    text: str


def targets(tables: RunTables) -> list[Target]:
    """Every non-empty statement of every finished testimony conversation."""
    conversations = tables.conversations
    seeds = dict(zip(conversations["conversation_id"], conversations["seed"], strict=True))
    found = []
    for record in records(tables, LLM_JUDGE):
        environment = record.meta.get("environment") or {}
        containers = tuple(environment.get("containers") or ())
        roles = tuple(a["name"] for a in record.meta["agents"])
        spoken = {(s.agent, s.phase) for s in record.statements if s.said.strip()}
        sent = [
            (m["sender"], m["kind"], tuple(m.get("recipients") or ()))
            for m in environment.get("messages") or ()
        ]
        for s in record.statements:
            if not s.said.strip():
                continue
            found.append(
                Target(
                    record.conversation_id,
                    s.seq,
                    judge_seed(int(seeds[record.conversation_id]), s.seq),
                    str(environment.get("object", "object")),
                    roles,
                    context_for(
                        s.agent,
                        s.phase,
                        record.testimony,
                        spoken,
                        containers,
                        received_by(s.agent, sent) if sent else None,
                    ),
                    s.said,
                )
            )
    return found


def _earlier(target: Target) -> list[str]:
    own = round_of(target.context.round)
    return sorted({p for _, p in target.context.spoken if round_of(p) < own}, key=round_of)


def extraction_call(target: Target, earlier: Sequence[str]) -> CallInfo:
    """What an extraction call is, for a simulated population: the `claims` judge task on one
    statement, with the people, containers and earlier rounds its answer's schema allows."""
    return CallInfo(
        CLAIMS,
        source="judge",
        paradigm="testimony",
        agent=target.context.speaker,
        round=round_of(target.context.round),
        facts={
            "text": target.text,
            "roles": target.roles,
            "containers": target.context.containers,
            "rounds": tuple(earlier),
            "conversation_id": target.conversation_id,
            "event_seq": target.event_seq,
        },
    )


@dataclass(frozen=True, slots=True)
class CitationExtractor:
    """A model that lists the claims of one statement, constrained to the claim schema."""

    model: str
    max_tokens: int = 1024

    def __post_init__(self) -> None:
        check_model(self.model)
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")

    def request(self, target: Target) -> Request:
        """The constrained temperature-0 request for one statement."""
        context, earlier = target.context, _earlier(target)
        system = _prompt("extract_system.txt").format(object=target.object)
        user = _prompt("extract_user.txt").format(
            roles=", ".join(target.roles),
            containers=", ".join(context.containers),
            rounds=", ".join(earlier) or "none",
            speaker=context.speaker,
            phase=context.round,
            text=target.text,
        )
        return Request(
            model=self.model,
            messages=(Message("system", system), Message("user", user)),
            settings=GenerationSettings(temperature=0.0, max_tokens=self.max_tokens),
            constraint=claim_schema(target.roles, earlier, context.containers),
            seed=target.seed,
            critical=False,
            call=extraction_call(target, earlier),
        )

    async def extract(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> tuple[str, int, str | None, str, str, str]:
        """One label row: (conversation_id, event_seq, label, status, text, model)."""
        completion = await client.generate(self.request(target), meter)
        label, status = label_of_completion(completion, target.context)
        return (
            target.conversation_id,
            target.event_seq,
            label,
            status,
            completion.text,
            completion.model,
        )


def label_of_completion(completion: Completion, context: Context) -> tuple[str | None, str]:
    """The stored label and status of an answer: its checked claims, or its failure."""
    if completion.status != "ok":
        return None, completion.status
    found: list[tuple[str, Claim | None]] = []
    for item in completion.value["claims"]:
        kind, role, phase = item["source_kind"], item["source_role"], item["source_round"]
        supports = None if item["supports"] == NONE else item["supports"]
        shown = f"[T:{role}]" if kind == "testimony" else f"[S:{role}@{phase}]"
        if kind == "statement" and phase == NONE:
            found.append((shown, None))  # a statement claim without its round
            continue
        found.append((shown, Claim(kind, role, None if kind == "testimony" else phase, supports)))
    return validate(found, context).label(), "ok"


async def extract_all(
    extractor: CitationExtractor, client: LLMClient, chosen: Sequence[Target]
) -> list[tuple[str, int, str | None, str, str, str]]:
    """Label rows of every target, all calls in flight at once (the client limits them)."""
    return list(await asyncio.gather(*(extractor.extract(client, t) for t in chosen)))


def extraction_counts(rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """How many statements got each status (ok, parse_failure, ...)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row[3]] = counts.get(row[3], 0) + 1
    return dict(sorted(counts.items()))


def markup_rows(chosen: Sequence[Target]) -> list[tuple[str, int, str | None, str, str, str]]:
    """Label rows from the citation markup of each statement (no model call)."""
    return [
        (t.conversation_id, t.event_seq, parse_markup(t.text, t.context).label(), "ok", "", "rule")
        for t in chosen
    ]
