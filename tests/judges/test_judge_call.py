"""A judge's request says what it judges (its call information): the task by name, the text,
its reference and context, so a simulated judge answers without reading the prompt."""

from __future__ import annotations

from dataclasses import replace

from backchannel.backends import cache_key
from backchannel.datasets import FactItem
from backchannel.judges import FACT_PUBLIC, ContextTurn, LLMJudge, Target

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


def test_a_judge_request_names_its_task_and_carries_the_target() -> None:
    target = Target(
        conversation_id="c/1/0",
        event_seq=4,
        task=FACT_PUBLIC,
        channel="public",
        speaker="Bob",
        text="It is Sydney.",
        reference=ITEM,
        conversation_seed=9,
        context=(ContextTurn("Ann", "Sydney, surely."),),
    )
    request = LLMJudge("sim/population").request(target)
    call = request.call
    assert call is not None and (call.source, call.prompt, call.agent) == ("judge", "public", "Bob")
    assert call.facts["text"] == "It is Sydney." and call.facts["reference"] is ITEM
    assert call.facts["context"] == (("Ann", "Sydney, surely."),)
    assert (call.facts["conversation_id"], call.facts["event_seq"]) == ("c/1/0", 4)
    # The same judge call without it has the same cache key.
    assert cache_key(request, "x") == cache_key(replace(request, call=None), "x")
