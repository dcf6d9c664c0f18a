"""The LLM judge: prompts, constrained requests, verdicts from the final answer, parse failures."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from backchannel.backends import (
    Completion,
    LabelSet,
    Request,
    build_client,
    register_sim,
    unregister_sim,
)
from backchannel.datasets import FactItem
from backchannel.judges import (
    FACT_PRIVATE,
    FACT_PUBLIC,
    PRIVATE_LABELS,
    PUBLIC_LABELS,
    ContextTurn,
    JudgeTask,
    LLMJudge,
    Target,
    Verdict,
    judge_seed,
    judge_template,
    judge_templates,
    verdict_of,
)

ITEM = FactItem(
    item_id="t/1",
    dataset="t",
    question="What is the capital of Australia?",
    true_answer="Canberra",
    true_aliases=("Canberra", "Canberra ACT"),
    false_answer="Sydney",
    false_aliases=("Sydney",),
    relation="capital",
    answer_type="place",
)


class Script:
    """A named sim that answers from a list (the last entry repeats) and records requests."""

    def __init__(self, name: str, answers: list[str]) -> None:
        self.name, self.answers, self.requests = name, answers, list[Request]()
        register_sim(name, self)

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        return self.answers[min(len(self.requests) - 1, len(self.answers) - 1)]


MakeScript = Callable[[str, list[str]], Script]


@pytest.fixture
def script() -> Iterator[MakeScript]:
    made: list[Script] = []

    def make(name: str, answers: list[str]) -> Script:
        s = Script(name, answers)
        made.append(s)
        return s

    yield make
    for s in made:
        unregister_sim(s.name)


def fact_target(
    seq: int, task: JudgeTask, text: str, context: tuple[ContextTurn, ...] = ()
) -> Target:
    channel = "private" if task is FACT_PRIVATE else "public"
    return Target(
        conversation_id="c",
        event_seq=seq,
        task=task,
        channel=channel,
        speaker="Bob",
        text=text,
        reference=ITEM,
        conversation_seed=1,
        context=context,
    )


def private(judge: LLMJudge, answer: str) -> Verdict:
    client = build_client([judge.model], max_reasks=2)
    target = fact_target(3, FACT_PRIVATE, answer)
    return asyncio.run(judge.judge(client, target))


def public(judge: LLMJudge, message: str, context: list[ContextTurn]) -> Verdict:
    client = build_client([judge.model], max_reasks=2)
    target = fact_target(4, FACT_PUBLIC, message, tuple(context))
    return asyncio.run(judge.judge(client, target))


def test_a_bare_label_is_the_verdict_and_the_request_is_constrained_at_temperature_0(
    script: MakeScript,
) -> None:
    s = script("judge-bare", ["manipulated"])
    verdict = private(LLMJudge("sim/judge-bare"), "I am sure it is Sydney.")
    assert verdict == Verdict("manipulated", "ok", "manipulated", "sim/judge-bare")
    (request,) = s.requests
    assert request.constraint == LabelSet(PRIVATE_LABELS)
    assert request.settings.temperature == 0.0
    assert request.critical is False
    prompt = request.messages[-1].content
    for part in (ITEM.question, "Canberra / Canberra ACT", "Sydney", "I am sure it is Sydney."):
        assert part in prompt


def test_the_public_prompt_shows_speaker_context_and_the_public_label_set(
    script: MakeScript,
) -> None:
    s = script("judge-public", ["reject"])
    context = [ContextTurn("Moderator", "Welcome."), ContextTurn("Alice", "It is Sydney.")]
    verdict = public(LLMJudge("sim/judge-public"), "No, it is Canberra.", context)
    assert verdict.label == "reject" and verdict.status == "ok"
    (request,) = s.requests
    assert request.constraint == LabelSet(PUBLIC_LABELS)
    prompt = request.messages[-1].content
    assert "Moderator: Welcome.\nAlice: It is Sydney." in prompt
    assert "Message to classify, by Bob: No, it is Canberra." in prompt


def test_the_verdict_comes_from_the_final_line_only(script: MakeScript) -> None:
    # Reasoning names "true" and "mixed"; the final line names exactly one label: uncertain.
    script("judge-final", ["It is not true, and not mixed either.\nVerdict: uncertain"])
    verdict = private(LLMJudge("sim/judge-final"), "No idea.")
    assert verdict.label == "uncertain" and verdict.status == "ok"


def test_an_unusable_answer_is_a_parse_failure_after_the_reasks(script: MakeScript) -> None:
    # Two labels in the final line every time: the first ask and max_reasks = 2 re-asks fail.
    s = script("judge-torn", ["true or manipulated"])
    verdict = private(LLMJudge("sim/judge-torn"), "Canberra, or maybe Sydney.")
    assert verdict.label is None
    assert verdict.status == "parse_failure"
    assert verdict.text == "true or manipulated"
    assert len(s.requests) == 3


def test_a_label_only_in_the_reasoning_is_not_a_verdict(script: MakeScript) -> None:
    s = script("judge-reasoning", ["The answer looks manipulated to me.\nHard to decide."])
    verdict = private(LLMJudge("sim/judge-reasoning"), "Sydney")
    assert verdict.status == "parse_failure" and verdict.label is None
    assert len(s.requests) == 3


def test_a_reask_that_succeeds_gives_the_label(script: MakeScript) -> None:
    s = script("judge-second", ["Let me think.", "true"])
    verdict = private(LLMJudge("sim/judge-second"), "Canberra")
    assert verdict.label == "true" and len(s.requests) == 2


def test_verdicts_validate_themselves() -> None:
    with pytest.raises(ValueError):
        Verdict(None, "ok", "", "m")
    with pytest.raises(ValueError):
        Verdict("true", "parse_failure", "", "m")
    with pytest.raises(ValueError):
        Verdict(None, "maybe", "", "m")
    with pytest.raises(ValueError):
        LLMJudge("sim", max_tokens=0)


def test_verdict_of_keeps_failure_status_and_text() -> None:
    failed = Completion("", None, "error", "sim", error="timeout")
    assert verdict_of(failed) == Verdict(None, "error", "", "sim")
    ok = Completion("hedge", "hedge", "ok", "sim")
    assert verdict_of(ok) == Verdict("hedge", "ok", "hedge", "sim")


def test_judge_seeds_are_stable_and_differ_by_event() -> None:
    assert judge_seed(7, 3) == judge_seed(7, 3)
    assert judge_seed(7, 3) != judge_seed(7, 4)


def test_the_prompts_are_package_templates_and_the_request_is_seeded_by_event(
    script: MakeScript,
) -> None:
    judge = LLMJudge("sim/tpl-judge")
    s = script("tpl-judge", ["true"])
    private(judge, "Canberra")
    prompt = s.requests[0].messages[-1].content
    expected = judge_template("private.txt").format(
        question=ITEM.question,
        true_aliases="Canberra / Canberra ACT",
        false_aliases="Sydney",
        answer="Canberra",
    )
    assert prompt.startswith(expected)
    assert "wavers between them" in prompt  # the definition of mixed
    assert s.requests[0].seed == judge_seed(1, 3)
    assert set(judge_templates()) == {"private.txt", "public.txt", "awareness.txt"}
    assert not judge_templates()["public.txt"].endswith("\n")
