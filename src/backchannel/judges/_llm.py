"""The LLM judge: any backend labels a target with its task's fixed label set.

The request carries a `LabelSet` constraint at temperature 0, so the client asks for exactly one
label, decodes under a grammar where the server supports it, reads the final answer strictly and
re-asks a bounded number of times. An answer that still names no single label is a parse failure
(label None), never a guess from the reasoning. The prompt is the target's task's.
"""

from __future__ import annotations

from dataclasses import dataclass

from backchannel.backends import (
    CallInfo,
    Completion,
    GenerationSettings,
    LabelSet,
    LLMClient,
    Message,
    Request,
    UsageMeter,
    check_model,
)
from backchannel.judges._target import Target, Verdict


def verdict_of(completion: Completion) -> Verdict:
    """The verdict a completion carries: its parsed label when ok, else its failure status."""
    if completion.status == "ok":
        return Verdict(str(completion.value), "ok", completion.text, completion.model)
    return Verdict(None, completion.status, completion.text, completion.model)


@dataclass(frozen=True, slots=True)
class LLMJudge:
    """A model that labels targets with their task's labels, at temperature 0."""

    model: str
    max_tokens: int = 16

    def __post_init__(self) -> None:
        check_model(self.model)
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")

    def request(self, target: Target) -> Request:
        """The constrained temperature-0 request that judges `target`; its call information
        names the task and carries the target (its text, reference and context) as facts."""
        return Request(
            model=self.model,
            messages=(Message("user", target.task.prompt(target)),),
            settings=GenerationSettings(temperature=0.0, max_tokens=self.max_tokens),
            constraint=LabelSet(tuple(target.task.labels)),
            seed=target.seed,
            critical=False,
            call=judge_call(target),
        )

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict:
        return verdict_of(await client.generate(self.request(target), meter))


def judge_call(target: Target) -> CallInfo:
    """What a judge call is: the task (by name) on one event's text, against its reference."""
    return CallInfo(
        target.task.name,
        source="judge",
        agent=target.speaker,
        facts={
            "text": target.text,
            "reference": target.reference,
            "channel": target.channel,
            "context": tuple((turn.speaker, turn.text) for turn in target.context),
            "conversation_id": target.conversation_id,
            "event_seq": target.event_seq,
        },
    )
