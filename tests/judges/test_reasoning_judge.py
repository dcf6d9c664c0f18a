"""A judge on a reasoning model: the verdict is read from its answer, never from its reasoning,
and a judge cut off inside its reasoning is a `truncated` verdict without a label."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backchannel.backends import Completion, Request, build_client, register_sim, unregister_sim
from backchannel.datasets import FactItem
from backchannel.judges import FACT_PRIVATE, PRIVATE_LABELS, LLMJudge, Target, verdict_of

ITEM = FactItem(
    item_id="t/1",
    dataset="t",
    question="What is the capital of Australia?",
    true_answer="Canberra",
    true_aliases=("Canberra",),
    false_answer="Sydney",
    false_aliases=("Sydney",),
    relation="capital",
    answer_type="place",
)
SIM = "reasoning-judge"


@pytest.fixture
def thinking_judge() -> Iterator[list[Request]]:
    """Reasons in a think block naming one label, then answers another."""
    requests: list[Request] = []
    first, second = PRIVATE_LABELS[0], PRIVATE_LABELS[1]

    def answer(request: Request) -> str:
        requests.append(request)
        return f"<think>\nIt could be {first}.\n{first}\n</think>\n\n{second}"

    register_sim(SIM, answer)
    yield requests
    unregister_sim(SIM)


async def test_the_verdict_is_the_answer_after_the_think_block(
    thinking_judge: list[Request],
) -> None:
    client = build_client([f"sim/{SIM}"])
    target = Target(
        conversation_id="c",
        event_seq=3,
        task=FACT_PRIVATE,
        channel="private",
        speaker="Bob",
        text="Canberra",
        reference=ITEM,
        conversation_seed=1,
    )
    verdict = await LLMJudge(f"sim/{SIM}").judge(client, target)
    assert (verdict.label, verdict.status) == (PRIVATE_LABELS[1], "ok")
    # the judge's stored text is its answer only
    assert verdict.text == PRIVATE_LABELS[1]
    assert len(thinking_judge) == 1


def test_a_truncated_judge_call_is_a_verdict_without_label() -> None:
    completion = Completion("", None, "truncated", "sim", error="max_tokens", reasoning="It")
    verdict = verdict_of(completion)
    assert (verdict.label, verdict.status) == (None, "truncated")
