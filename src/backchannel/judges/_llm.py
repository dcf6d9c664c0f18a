"""The LLM judge: any backend labels a private answer or a public message with a fixed label set.

The request carries a `LabelSet` constraint at temperature 0, so the client asks for exactly one
label, decodes under a grammar where the server supports it, reads the final answer strictly and
re-asks a bounded number of times. An answer that still names no single label is a parse failure
(label None), never a guess from the reasoning. The prompts are the templates under `prompts/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backchannel.backends import (
    Completion,
    GenerationSettings,
    LabelSet,
    LLMClient,
    Message,
    Request,
    UsageMeter,
    check_model,
)
from backchannel.datasets import FactItem
from backchannel.judges._labels import PRIVATE_LABELS, PUBLIC_LABELS
from backchannel.judges._prompts import judge_template
from backchannel.judges._target import ContextTurn, Target, Verdict


def _aliases(aliases: Sequence[str]) -> str:
    return " / ".join(aliases)


def private_messages(item: FactItem, answer: str) -> list[Message]:
    """The judge prompt for one private answer."""
    text = judge_template("private.txt").format(
        question=item.question,
        true_aliases=_aliases(item.true_aliases),
        false_aliases=_aliases(item.false_aliases),
        answer=answer.strip() or "(empty)",
    )
    return [Message("user", text)]


def public_messages(
    item: FactItem, speaker: str, message: str, context: Sequence[ContextTurn]
) -> list[Message]:
    """The judge prompt for one public message, with the earlier messages as context."""
    text = judge_template("public.txt").format(
        question=item.question,
        true_aliases=_aliases(item.true_aliases),
        false_aliases=_aliases(item.false_aliases),
        context="\n".join(turn.render() for turn in context) or "(none)",
        speaker=speaker,
        message=message.strip() or "(empty)",
    )
    return [Message("user", text)]


def verdict_of(completion: Completion) -> Verdict:
    """The verdict a completion carries: its parsed label when ok, else its failure status."""
    if completion.status == "ok":
        return Verdict(str(completion.value), "ok", completion.text, completion.model)
    return Verdict(None, completion.status, completion.text, completion.model)


@dataclass(frozen=True, slots=True)
class LLMJudge:
    """A model that labels texts: private answers with PRIVATE_LABELS, public messages with
    PUBLIC_LABELS, at temperature 0."""

    model: str
    max_tokens: int = 16

    def __post_init__(self) -> None:
        check_model(self.model)
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")

    def request(self, target: Target) -> Request:
        """The constrained temperature-0 request that judges `target`."""
        labels: tuple[str, ...]
        if target.channel == "private":
            messages, labels = private_messages(target.item, target.text), PRIVATE_LABELS
        else:
            messages = public_messages(target.item, target.speaker, target.text, target.context)
            labels = PUBLIC_LABELS
        return Request(
            model=self.model,
            messages=tuple(messages),
            settings=GenerationSettings(temperature=0.0, max_tokens=self.max_tokens),
            constraint=LabelSet(tuple(labels)),
            seed=target.seed,
            critical=False,
        )

    async def judge(
        self, client: LLMClient, target: Target, meter: UsageMeter | None = None
    ) -> Verdict:
        return verdict_of(await client.generate(self.request(target), meter))
