"""Per-conversation figures (the Inspect samples' scores), on tables built by hand with counts
worked out by hand."""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.interop._figures import conversation_figures


def event(cid: str, seq: int, channel: str, model: str = "m", **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "run_id": "r",
        "conversation_id": cid,
        "seq": seq,
        "kind": "message" if channel != "private" else "probe",
        "name": "turn",
        "round": 1,
        "turn": seq,
        "agent": "A",
        "role": "member",
        "channel": channel,
        "text": "words",
        "reasoning": "",
        "value": None,
        "status": "ok",
        "model": model,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "reasoning_tokens": 0,
        "latency_s": 0.0,
        "cached": False,
        "meta": "{}",
    }
    row.update(extra)
    return row


def label(
    cid: str, seq: int, judge: str, value: str | None, status: str = "ok"
) -> dict[str, object]:
    return {"run_id": "r", "conversation_id": cid, "event_seq": seq, "judge": judge,
            "label": value, "status": status, "text": "", "model": "rule"}  # fmt: skip


def tables() -> RunTables:
    events = pd.DataFrame(
        [
            event("c1", 0, "public", model=""),  # a moderator's opening: no call
            event("c1", 1, "public", prompt_tokens=7, reasoning_tokens=3),
            event("c1", 2, "direct", cached=True),
            event("c1", 3, "private", text="  ", status="ok"),  # empty
            event("c1", 4, "private", status="parse_failure"),  # unreadable
            event("c1", 5, "private", text="", status="refusal"),
            event("c2", 0, "private", text="", status="error"),
        ]
    )
    labels = pd.DataFrame(
        [
            label("c1", 1, "j", "endorse"),
            label("c1", 3, "j", "true"),
            label("c1", 4, "j", None, "parse_failure"),
            label("c1", 5, "j", '{"claims": []}'),  # not from a label set
            label("c2", 0, "k", "true"),
        ]
    )
    conversations = pd.DataFrame(
        {"run_id": "r", "conversation_id": ["c1", "c2", "c3"], "status": "done"}
    )
    return RunTables(events, labels, conversations, {})


def test_counts_by_channel_usage_answers_and_labels() -> None:
    figures = conversation_figures(tables(), {"endorse", "reject", "true", "false"})
    c1 = figures["c1"]
    assert c1["events"] == {"public": 2, "direct": 1, "private": 3}
    assert c1["usage"] == {
        "calls": 5,
        "prompt_tokens": 7 + 10 * 4,
        "completion_tokens": 2 * 5,
        "reasoning_tokens": 3,
        "cached": 1,
    }
    # empty counts blank ok/parse-failure texts; unreadable non-blank parse failures
    assert c1["answers"] == {"empty": 1, "unreadable": 1, "refused": 1, "errors": 0}
    # keys are the labels the run used (set order), `other` and `not_ok`, in every conversation
    assert c1["labels/j"] == {"endorse": 1, "true": 1, "other": 1, "not_ok": 1}
    assert c1["labels/k"] == {"true": 0, "not_ok": 0}
    assert figures["c2"]["labels/j"] == {"endorse": 0, "true": 0, "other": 0, "not_ok": 0}
    assert figures["c2"]["labels/k"] == {"true": 1, "not_ok": 0}
    assert figures["c2"]["answers"]["errors"] == 1
    # a conversation with no event (a failed one) has every figure, all zero
    assert figures["c3"]["events"] == {"public": 0, "direct": 0, "private": 0}
    assert figures["c3"]["usage"]["calls"] == 0
    assert list(figures) == ["c1", "c2", "c3"]


def test_without_label_sets_every_ok_label_is_other() -> None:
    figures = conversation_figures(tables(), set())
    assert figures["c1"]["labels/j"] == {"other": 3, "not_ok": 1}
