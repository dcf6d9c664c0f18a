"""The paradigm check finds a wrong estimate, a leaked private answer and a resume that differs,
and passes a paradigm that has none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from backchannel.paradigms import CallEstimate
from backchannel.paradigms.discussion import Discussion
from backchannel.testing import check_paradigm
from backchannel.testing._paradigm_check import _event_differences, _leaks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "discussion.yaml"


def _events(rows: list[tuple[int, str, str, list[list[str]]]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "conversation_id": "c1",
                "seq": seq,
                "channel": channel,
                "status": "ok",
                "text": text,
                "latency_s": 0.1 * seq,
                "cached": 0,
                "meta": json.dumps({"retries": seq}),
            }
            for seq, channel, text, _ in rows
        ]
    )


def _prompts(rows: list[tuple[int, str, str, list[list[str]]]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"conversation_id": "c1", "seq": seq, "prompt": json.dumps(prompt)}
            for seq, _, _, prompt in rows
        ]
    )


SECRET = "my private belief is the Eiffel tower, honestly"


def test_a_private_answer_in_a_later_prompt_is_a_leak() -> None:
    leaking = [
        (1, "private", SECRET, [["user", "what do you think?"]]),
        (2, "public", "hello", [["user", f"Conversation so far: {SECRET}"]]),
    ]
    assert _leaks(_events(leaking), _prompts(leaking)) == [
        "conversation c1: the private answer of event 1 appears in the prompt of event 2"
    ]
    clean = [(1, "private", SECRET, [["user", "q"]]), (2, "public", "hi", [["user", "so far: hi"]])]
    assert _leaks(_events(clean), _prompts(clean)) == []


def test_resumed_events_are_compared_without_timings_and_retries() -> None:
    base = _events([(1, "public", "a", []), (2, "public", "b", [])])
    retimed = base.assign(latency_s=[9.0, 9.0], meta=[json.dumps({"retries": 5})] * 2)
    assert _event_differences(base, retimed) == []
    changed = base.assign(text=["a", "c"])
    assert _event_differences(base, changed) == [
        "a resumed run differs from an uninterrupted one in 1 events (first: conversation c1, "
        "seq 2; columns text)"
    ]


@pytest.mark.slow
def test_the_discussion_example_passes_and_a_wrong_estimate_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert check_paradigm(EXAMPLE, tmp_path / "ok", limit=2) == []
    original = Discussion.estimate

    def one_too_many(self: Discussion, settings, item, replicate=0) -> CallEstimate:  # type: ignore[no-untyped-def]
        found = original(self, settings, item, replicate)
        return CallEstimate({m: n + 1 for m, n in found.calls.items()})

    monkeypatch.setattr(Discussion, "estimate", one_too_many)
    assert check_paradigm(EXAMPLE, tmp_path / "off", limit=2) == [
        "the estimate says 32 calls, the run made 30"
    ]
