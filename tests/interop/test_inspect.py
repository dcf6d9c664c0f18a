"""`export --format inspect`: Inspect's own reader gets back every conversation as a sample and
every model call as a model event, with the same text, the same counts and the run's header."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from conftest import invoke
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log

import backchannel as bc
from backchannel.analysis import decode_json


def export(run: Path, out: Path) -> list[EvalLog]:
    result = invoke("export", run, "--format", "inspect", "-o", out)
    assert result.exit_code == 0, result.stderr
    files = sorted(out.glob("*.eval"))
    assert [str(p) for p in files] == result.stdout.split()
    return [read_eval_log(str(p), resolve_attachments=True) for p in files]


def samples_by_conversation(logs: list[EvalLog]) -> dict[str, tuple[EvalLog, EvalSample]]:
    found: dict[str, tuple[EvalLog, EvalSample]] = {}
    for log in logs:
        for sample in log.samples or []:
            cid = sample.metadata["conversation_id"]
            assert cid not in found
            found[cid] = (log, sample)
    return found


def stored_prompt(text: Any) -> list[tuple[str, str]] | None:
    """A call's prompt from the run's prompts table (None: the event was no model call)."""
    prompt = decode_json(text)
    return None if prompt is None else [(role, content) for role, content in prompt]


def check_round_trip(run: Path, logs: list[EvalLog]) -> None:
    """Every conversation, call and other event of the run, by its text, in the logs."""
    tables = bc.open_run(run).tables
    conversations = tables.conversations
    samples = samples_by_conversation(logs)
    assert sorted(samples) == sorted(conversations["conversation_id"])
    assert len(logs) == conversations["cell_key"].nunique()
    for row in conversations.itertuples():
        log, sample = samples[row.conversation_id]
        assert log.eval.task_args == json.loads(row.cell)
        assert (sample.id, sample.epoch) == (row.item_id, row.replicate + 1)
        assert sample.metadata["cell"] == json.loads(row.cell)
        assert sample.metadata["item"] == decode_json(row.meta)["item"]
        assert sample.metadata["status"] == row.status
        assert (sample.error is None) == (row.status == "done")
        events = tables.events[tables.events["conversation_id"] == row.conversation_id]
        sent = tables.prompts[tables.prompts["conversation_id"] == row.conversation_id]
        by_seq = dict(zip(sent["seq"].tolist(), sent["prompt"].tolist(), strict=True))
        prompts = [stored_prompt(by_seq.get(int(seq))) for seq in events["seq"]]
        calls = events[[p is not None for p in prompts]]
        others = events[[p is None for p in prompts]]
        model_events = [e for e in sample.events if isinstance(e, ModelEvent)]
        infos = [e for e in sample.events if isinstance(e, InfoEvent)]
        assert len(model_events) == len(calls)
        assert len(infos) == len(others)
        for event, call in zip(model_events, calls.itertuples(), strict=True):
            assert event.metadata is not None and event.metadata["seq"] == call.seq
            assert [(m.role, m.text) for m in event.input] == stored_prompt(by_seq[int(call.seq)])
            assert event.output.completion == call.text
            assert event.output.message.text == call.text
            assert event.model == call.model
            assert (event.metadata["channel"], event.metadata["agent"]) == (
                call.channel,
                call.agent,
            )
            assert (event.metadata["kind"], event.metadata["name"]) == (call.kind, call.name)
            assert event.metadata["round"] == call.round
            usage = event.output.usage
            assert usage is not None
            assert (usage.input_tokens, usage.output_tokens) == (
                call.prompt_tokens,
                call.completion_tokens,
            )
            assert (event.cache == "read") == bool(call.cached)
        for info, other in zip(infos, others.itertuples(), strict=True):
            assert info.data == other.text
            assert info.metadata is not None and info.metadata["agent"] == other.agent
        room = events[events["kind"] == "message"]
        assert [m.text for m in sample.messages] == list(room["text"])
        assert [m.metadata["channel"] for m in sample.messages if m.metadata] == list(
            room["channel"]
        )
        by_channel = events["channel"].value_counts()
        assert sample.scores is not None
        assert sample.scores["events"].value == {
            c: int(by_channel.get(c, 0)) for c in ("public", "direct", "private")
        }
        assert sample.scores["usage"].value["calls"] == int((events["model"] != "").sum())  # type: ignore[index]


def test_every_conversation_and_call_of_the_quickstart_round_trips(
    quickstart_run: Path, tmp_path: Path
) -> None:
    logs = export(quickstart_run, tmp_path / "logs")
    check_round_trip(quickstart_run, logs)
    manifest = bc.open_run(quickstart_run).manifest
    samples = sum(len(log.samples or []) for log in logs)
    calls = sum(
        1 for log in logs for s in log.samples or [] for e in s.events if isinstance(e, ModelEvent)
    )
    assert (samples, calls) == (4, 54)  # the quickstart's 4 conversations and 54 calls
    for log in logs:
        header = log.eval.metadata["backchannel"]  # type: ignore[index]
        assert header["seed"] == manifest["seed"] == 7
        assert header["package_version"] == bc.__version__
        assert header["design"]["factors"] == ["model", "k"]
        assert header["design"]["levels"] == {"model": ["sim/population"], "k": [0, 1]}
        assert header["models"] == ["sim/population"]
        assert header["cell"] == log.eval.task_args
        assert log.eval.run_id == manifest["run_id"]
        assert log.eval.model == "sim/population"
        assert log.eval.packages == {"backchannel": bc.__version__}
        assert log.status == "success"
        assert log.results is not None and log.results.completed_samples == 2


def test_testimony_keeps_direct_messages_apart_with_their_recipients(
    testimony_run: Path, tmp_path: Path
) -> None:
    logs = export(testimony_run, tmp_path / "logs")
    check_round_trip(testimony_run, logs)
    spans = [
        e
        for log in logs
        for s in log.samples or []
        for e in s.events
        if isinstance(e, SpanBeginEvent)
    ]
    channels = {e.type for e in spans}
    assert channels == {"public", "direct", "private"}
    direct = [e for e in spans if e.type == "direct"]
    assert direct and all(" to " in e.name for e in direct)


def test_reasks_reasoning_failures_and_unfinished_conversations(
    hand_run: Path, tmp_path: Path
) -> None:
    logs = export(hand_run, tmp_path / "logs")
    check_round_trip(hand_run, logs)
    samples = samples_by_conversation(logs)
    log, sample = samples["model=sim/a/q1/0"]
    calls = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert [m.role for m in calls[2].input] == ["system", "user", "assistant", "user"]
    assert calls[2].retries == 2
    first = calls[0].output.message
    assert first.text == "I think 4."
    assert [c.type for c in first.content] == ["reasoning", "text"]  # type: ignore[union-attr]
    assert calls[1].cache == "read"
    assert calls[3].error == "server said no" and calls[3].output.error == "server said no"
    assert calls[0].metadata is not None
    assert calls[0].metadata["labels"] == {
        "rule": {"label": "endorse", "status": "ok", "model": "rule"}
    }
    assert sample.scores is not None
    # discussion declares no judge tasks, so no label set: every ok label is `other`
    assert sample.scores["labels/rule"].value == {"other": 2, "not_ok": 1}
    assert sample.scores["answers"].value == {
        "empty": 0,
        "unreadable": 0,
        "refused": 0,
        "errors": 1,
    }
    assert log.status == "error"  # this cell has an incomplete conversation
    assert log.error is not None and "1 incomplete" in log.error.message
    failed_log, failed = samples["model=sim/b/q1/0"]
    assert failed.error is not None and "it broke" in failed.error.message
    assert failed.events == [] and failed_log.status == "error"
    header = log.eval.metadata["backchannel"]  # type: ignore[index]
    assert header["created"].startswith("2023-11-14T22:13:20")
    assert header["design"]["replicates"] == 2


def test_the_same_run_gives_the_same_logs(hand_run: Path, tmp_path: Path) -> None:
    first = export(hand_run, tmp_path / "one")
    second = export(hand_run, tmp_path / "two")
    dump = [log.model_dump(exclude={"location", "etag"}) for log in first]
    assert dump == [log.model_dump(exclude={"location", "etag"}) for log in second]


def test_sample_figures_are_the_tables_counts(quickstart_run: Path, tmp_path: Path) -> None:
    logs = export(quickstart_run, tmp_path / "logs")
    tables = bc.open_run(quickstart_run).tables
    samples = samples_by_conversation(logs)
    labels = tables.labels[tables.labels["status"] == "ok"]
    counts = labels.groupby(["conversation_id", "label"]).size()
    for cid, (_, sample) in samples.items():
        assert sample.scores is not None
        figures = sample.scores["labels/rule"].value
        assert isinstance(figures, dict)
        expected = {label: int(n) for (c, label), n in counts.items() if c == cid}
        assert {k: v for k, v in figures.items() if v} == expected
        events = tables.events[tables.events["conversation_id"] == cid]
        assert sample.scores["usage"].value["prompt_tokens"] == events["prompt_tokens"].sum()  # type: ignore[index]
    log = logs[0]
    assert log.results is not None
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    cell = [s for s in log.samples or []]
    public = pd.Series([s.scores["events"].value["public"] for s in cell])  # type: ignore[index]
    assert means["events/public"] == public.mean()
