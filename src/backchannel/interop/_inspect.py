"""A run as Inspect `.eval` logs, written with inspect_ai's own log API.

One log per cell (an Inspect eval is one task on one model; a cell is one combination of the
design's factors), one sample per conversation (sample id = item, epoch = replicate + 1), and
every model call as a model event with the exact messages it was sent and its answer. Each
call sits in a span named after its channel, agent and round, so public turns, direct messages
and private probes stay apart in Inspect's transcript. Events that were no model call (a
moderator's opening message) are info events. The run's design, models, seed and package
version are in each log's header (`eval.metadata["backchannel"]`).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from inspect_ai.event import Event as InspectEvent
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalRevision,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.log import EvalError as InspectError
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score

from backchannel.interop._figures import Figures, conversation_figures
from backchannel.interop._prompts import Prompt, call_prompts

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

NAMESPACE = uuid.UUID("6f1c0a52-8f0e-4d0b-9a57-3d1c5e1b2a90")
"""Sample and event uuids are derived from the run, conversation and seq: the same run gives
the same logs."""

StopReason = Literal[
    "stop", "max_tokens", "model_length", "tool_calls", "content_filter", "unknown"
]
_STOP: dict[str, StopReason] = {
    "ok": "stop",
    "parse_failure": "stop",
    "truncated": "max_tokens",
    "refusal": "content_filter",
}
"""Inspect's stop reason of a call, by the stored status (`error`: unknown)."""


def write_inspect_logs(tables: RunTables, label_sets: Iterable[str], folder: Path) -> list[str]:
    """Write one `.eval` log per cell of the run into `folder`; returns the file names."""
    prompts = call_prompts(tables)
    figures = conversation_figures(tables, set(label_sets))
    header = run_header(tables)
    conversations = tables.conversations
    events = tables.events
    by_conversation = {str(c): g for c, g in events.groupby("conversation_id", sort=False)}
    labels = _labels_by_event(tables.labels)
    names: list[str] = []
    cells = list(dict.fromkeys(conversations["cell_key"].astype(str)))
    for index, cell_key in enumerate(cells):
        rows = conversations[conversations["cell_key"].astype(str) == cell_key]
        samples = [
            _sample(
                row,
                by_conversation.get(str(row["conversation_id"]), events.iloc[0:0]),
                prompts,
                labels,
                figures[str(row["conversation_id"])],
                header,
            )
            for _, row in rows.iterrows()
        ]
        cell_figures = [figures[str(c)] for c in rows["conversation_id"]]
        log = _log(tables, header, cell_key, rows, samples, cell_figures)
        name = f"{index + 1:03d}_{_slug(cell_key)}.eval"
        write_eval_log(log, folder / name, format="eval")
        names.append(name)
    return names


def run_header(tables: RunTables) -> dict[str, Any]:
    """What every log of the run carries about it: design, models, seed, versions."""
    manifest = tables.manifest
    resolved = manifest.get("config_resolved") or {}
    events = tables.core_events
    models = sorted({str(m) for m in events["model"].dropna() if str(m)})
    return {
        "run_id": str(manifest.get("run_id", "")),
        "experiment": manifest.get("name"),
        "paradigm": manifest.get("paradigm"),
        "seed": manifest.get("seed"),
        "package_version": manifest.get("package_version"),
        "git_commit": manifest.get("git_commit"),
        "git_dirty": manifest.get("git_dirty"),
        "fingerprint": manifest.get("fingerprint"),
        "design": {
            "factors": list(manifest.get("factors") or []),
            "levels": resolved.get("factors", {}),
            "replicates": resolved.get("replicates"),
            "exclude": resolved.get("exclude", []),
        },
        "models": models,
        "settings": resolved.get("settings", {}),
        "run_state": manifest.get("run_state"),
        "created": _created(manifest),
    }


def _log(
    tables: RunTables,
    header: dict[str, Any],
    cell_key: str,
    rows: pd.DataFrame,
    samples: list[EvalSample],
    cell_figures: list[Figures],
) -> EvalLog:
    cell = json.loads(str(rows["cell"].iloc[0]))
    calls = tables.core_events[
        tables.core_events["conversation_id"].isin(set(rows["conversation_id"]))
        & (tables.core_events["model"].astype("str").fillna("") != "")
    ]
    model = _main_model(calls)
    created = header["created"].isoformat()
    run_id = header["run_id"]
    statuses = Counter(str(s) for s in rows["status"])
    status, error = _status(header.get("run_state") or {}, statuses)
    spec = EvalSpec(
        eval_id=_short_id(run_id, cell_key),
        run_id=run_id,
        created=created,
        task=str(header.get("experiment") or header.get("paradigm") or "backchannel"),
        task_id=_short_id(run_id),
        task_version=0,
        task_display_name=f"{header.get('experiment')} ({header.get('paradigm')}): {cell_key}",
        task_args=cell,
        task_args_passed=cell,
        tags=[str(header.get("paradigm"))],
        dataset=EvalDataset(
            name=str(header.get("experiment") or ""),
            samples=len(samples),
            sample_ids=[str(s.id) for s in samples],
            shuffled=False,
        ),
        model=model,
        model_roles=_model_roles(calls) or None,
        config=EvalConfig(epochs=int(rows["replicate"].max()) + 1 if len(rows) else 1),
        revision=(
            EvalRevision(
                type="git", origin="", commit=str(header["git_commit"]), dirty=header["git_dirty"]
            )
            if header.get("git_commit")
            else None
        ),
        packages={"backchannel": str(header.get("package_version"))},
        metadata={"backchannel": {**_jsonable_header(header), "cell_key": cell_key, "cell": cell}},
    )
    usage = _usage(calls)
    return EvalLog(
        status=status,
        eval=spec,
        plan=EvalPlan(
            name="backchannel",
            steps=[
                EvalPlanStep(
                    solver=f"backchannel/{header.get('paradigm')}",
                    params=header.get("settings") or {},
                )
            ],
        ),
        results=_results(samples, cell_figures),
        stats=EvalStats(started_at=created, completed_at=created, model_usage=usage),
        error=error,
        samples=samples,
    )


def _sample(
    row: pd.Series,
    events: pd.DataFrame,
    prompts: dict[tuple[str, int], Prompt],
    labels: dict[tuple[str, int], dict[str, Any]],
    figures: Figures,
    header: dict[str, Any],
) -> EvalSample:
    cid = str(row["conversation_id"])
    meta = _decode(row["meta"]) or {}
    item = meta.pop("item", None)
    created: datetime = header["created"]
    stream: list[InspectEvent] = []
    messages: list[ChatMessage] = []
    clock = 0.0
    records: list[dict[str, Any]] = events.to_dict("records")  # type: ignore[assignment]
    for event in records:
        seq = int(event["seq"])
        prompt = prompts.get((cid, seq))
        latency = float(event["latency_s"] or 0.0)
        when = created + timedelta(seconds=clock)
        span = f"{cid}#{seq}"
        uid = f"{header['run_id']}/{span}"
        stream.append(
            SpanBeginEvent(
                id=span,
                name=_span_name(event),
                type=str(event["channel"]),
                uuid=_uid(uid, "begin"),
                timestamp=when,
                working_start=clock,
            )
        )
        details = _event_details(event, labels.get((cid, seq), {}))
        if prompt is None:
            stream.append(
                InfoEvent(
                    source="backchannel",
                    data=str(event["text"]),
                    metadata=details,
                    span_id=span,
                    uuid=_uid(uid, "info"),
                    timestamp=when,
                    working_start=clock,
                )
            )
        else:
            stream.append(_model_event(event, prompt, details, span, uid, when, clock))
        clock += latency
        stream.append(
            SpanEndEvent(
                id=span,
                uuid=_uid(uid, "end"),
                timestamp=created + timedelta(seconds=clock),
                working_start=clock,
            )
        )
        if event["kind"] == "message":
            messages.append(_room_message(event, details, _uid(uid, "message")))
    calls = events[events["model"].astype("str").fillna("") != ""]
    status = str(row["status"])
    return EvalSample(
        id=str(row["item_id"]),
        epoch=int(row["replicate"]) + 1,
        input=_item_text(str(row["item_id"]), item),
        target="",
        messages=messages,
        scores={name: Score(value=dict(values)) for name, values in figures.items()},
        metadata={
            "conversation_id": cid,
            "cell_key": str(row["cell_key"]),
            "cell": json.loads(str(row["cell"])),
            "item_id": str(row["item_id"]),
            "item": item,
            "replicate": int(row["replicate"]),
            "seed": int(row["seed"]),
            "status": status,
            "error": None if _missing(row["error"]) else str(row["error"]),
            "conversation_meta": meta,
        },
        events=stream,
        model_usage=_usage(calls),
        total_time=clock,
        working_time=clock,
        uuid=str(uuid.uuid5(NAMESPACE, f"{header['run_id']}/{cid}")),
        error=(
            None
            if status == "done"
            else InspectError(
                message=f"conversation {status}: {row['error'] or 'some calls failed'}",
                traceback="",
                traceback_ansi="",
            )
        ),
        started_at=created.isoformat(),
        completed_at=(created + timedelta(seconds=clock)).isoformat(),
    )


def _model_event(
    event: dict[str, Any],
    prompt: Prompt,
    details: dict[str, Any],
    span: str,
    uid: str,
    when: datetime,
    clock: float,
) -> ModelEvent:
    status = str(event["status"])
    text = str(event["text"])
    reasoning = str(event.get("reasoning") or "")
    model = str(event["model"])
    error = details.get("meta", {}).get("error") if status == "error" else None
    content: str | list[Any] = (
        [ContentReasoning(reasoning=reasoning), ContentText(text=text)] if reasoning else text
    )
    usage = ModelUsage(
        input_tokens=int(event["prompt_tokens"]),
        output_tokens=int(event["completion_tokens"]),
        total_tokens=int(event["prompt_tokens"]) + int(event["completion_tokens"]),
        reasoning_tokens=int(event.get("reasoning_tokens") or 0) or None,
    )
    latency = float(event["latency_s"] or 0.0)
    output = ModelOutput(
        model=model,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(
                    id=_uid(uid, "output"), content=content, model=model, source="generate"
                ),
                stop_reason=_STOP.get(status, "unknown"),
            )
        ],
        completion=text,
        usage=usage,
        time=latency,
        error=None if error is None else str(error),
    )
    retries = details.get("meta", {}).get("retries")
    return ModelEvent(
        model=model,
        role=str(event["role"]),
        input=[
            _message(role, content, _uid(uid, "input", str(i)))
            for i, (role, content) in enumerate(prompt)
        ],
        tools=[],
        tool_choice="none",
        config=GenerateConfig(),
        output=output,
        retries=int(retries) if isinstance(retries, int) else None,
        error=None if error is None else str(error),
        cache="read" if bool(event["cached"]) else None,
        metadata=details,
        span_id=span,
        uuid=_uid(uid, "model"),
        timestamp=when,
        working_start=clock,
        working_time=latency,
        completed=when + timedelta(seconds=latency),
    )


def _message(role: str, content: str, uid: str) -> ChatMessage:
    if role == "system":
        return ChatMessageSystem(id=uid, content=content)
    if role == "assistant":
        return ChatMessageAssistant(id=uid, content=content)
    if role == "user":
        return ChatMessageUser(id=uid, content=content)
    raise ValueError(f"a stored prompt has a message of unknown role {role!r}")


def _room_message(event: dict[str, Any], details: dict[str, Any], uid: str) -> ChatMessage:
    """A public turn or direct message for the sample's message list. Inspect's messages have
    no speaker, so the speaker and channel are in the message's metadata."""
    text = str(event["text"])
    recipients = details["meta"].get("recipients")
    who = {k: details[k] for k in ("agent", "role", "channel", "round", "turn", "seq")}
    details = {**who, **({"recipients": recipients} if recipients else {})}
    if str(event["model"] or ""):
        return ChatMessageAssistant(
            id=uid, content=text, model=str(event["model"]), source="generate", metadata=details
        )
    return ChatMessageUser(id=uid, content=text, source="input", metadata=details)


def _labels_by_event(labels: pd.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    """Every judge's label of each event: `{judge: {"label", "status", "model"}}`."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for row in labels.to_dict("records"):
        key = (str(row["conversation_id"]), int(row["event_seq"]))
        found.setdefault(key, {})[str(row["judge"])] = {
            "label": None if _missing(row["label"]) else str(row["label"]),
            "status": str(row["status"]),
            "model": str(row["model"]),
        }
    return found


def _event_details(event: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any]:
    """The event's own fields, for the event's metadata: who, where, which channel, its parsed
    value and status, its judges' labels, and its `meta` without the prompt (which is the
    model event's input)."""
    meta = _decode(event["meta"]) or {}
    meta.pop("prompt", None)
    turn = event["turn"]
    return {
        "seq": int(event["seq"]),
        "kind": str(event["kind"]),
        "name": str(event["name"]),
        "round": int(event["round"]),
        "turn": None if _missing(turn) else int(turn),
        "agent": str(event["agent"]),
        "role": str(event["role"]),
        "channel": str(event["channel"]),
        "status": str(event["status"]),
        "value": _decode(event["value"]),
        "labels": labels,
        "meta": meta,
    }


def _span_name(event: dict[str, Any]) -> str:
    """`Alice (honest) · message/turn · round 2` (Inspect shows the span's type, the channel,
    before it); a direct message names its recipients."""
    recipients = (_decode(event["meta"]) or {}).get("recipients")
    to = f" to {', '.join(map(str, recipients))}" if isinstance(recipients, list) else ""
    return (
        f"{event['agent']} ({event['role']}){to} · {event['kind']}/{event['name']} · "
        f"round {int(event['round'])}"
    )


def _item_text(item_id: str, item: Any) -> str:
    """The sample's input: the item as the run stored it (its id and payload as JSON)."""
    if item is None:
        return item_id
    return f"{item_id}\n{json.dumps(item, ensure_ascii=False, indent=1, default=str)}"


def _results(samples: list[EvalSample], figures: list[Figures]) -> EvalResults:
    """Each figure's mean over the cell's conversations, one score per key as Inspect does
    for dictionary scores."""
    keys: dict[str, list[str]] = {}
    for one in figures:
        for name, counts in one.items():
            keys.setdefault(name, [])
            keys[name] += [k for k in counts if k not in keys[name]]
    scores = []
    for name, names in keys.items():
        for key in names:
            values = [float(one[name][key]) for one in figures if key in one.get(name, {})]
            scores.append(
                EvalScore(
                    name=f"{name}/{key}",
                    scorer=name,
                    scored_samples=len(values),
                    unscored_samples=len(samples) - len(values),
                    metrics={
                        "mean": EvalMetric(
                            name="mean", value=sum(values) / len(values) if values else 0.0
                        )
                    },
                )
            )
    done = sum(1 for s in samples if s.error is None)
    return EvalResults(total_samples=len(samples), completed_samples=done, scores=scores)


def _status(run_state: dict[str, Any], statuses: Counter[str]) -> tuple[Any, InspectError | None]:
    unfinished = sum(n for s, n in statuses.items() if s != "done")
    if unfinished:
        detail = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()) if s != "done")
        message = f"{unfinished} conversation(s) of this cell did not finish ({detail})"
        return "error", InspectError(message=message, traceback="", traceback_ansi="")
    if run_state.get("running"):
        return "started", None
    if run_state and not run_state.get("complete", True):
        return "cancelled", None
    return "success", None


def _main_model(calls: pd.DataFrame) -> str:
    """The model that made most of the cell's calls (ties: the first by name)."""
    if calls.empty:
        return "none/none"
    counts = Counter(str(m) for m in calls["model"])
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _model_roles(calls: pd.DataFrame) -> dict[str, ModelConfig | list[ModelConfig]]:
    roles: dict[str, ModelConfig | list[ModelConfig]] = {}
    for role, group in calls.groupby("role", sort=True):
        models = sorted({str(m) for m in group["model"]})
        configs = [ModelConfig(model=m) for m in models]
        roles[str(role)] = configs[0] if len(configs) == 1 else configs
    return roles


def _usage(calls: pd.DataFrame) -> dict[str, ModelUsage]:
    usage: dict[str, ModelUsage] = {}
    for model, group in calls.groupby("model", sort=True):
        prompt = int(group["prompt_tokens"].sum())
        completion = int(group["completion_tokens"].sum())
        reasoning = int(group["reasoning_tokens"].sum())
        usage[str(model)] = ModelUsage(
            input_tokens=prompt,
            output_tokens=completion,
            total_tokens=prompt + completion,
            reasoning_tokens=reasoning or None,
        )
    return usage


def _created(manifest: dict[str, Any]) -> datetime:
    """The run's creation time: stored events carry no clock time, so every event of the logs
    is placed at it, offset by the calls' latencies."""
    stamp = manifest.get("created_at")
    if isinstance(stamp, int | float):
        return datetime.fromtimestamp(float(stamp), tz=UTC)
    return datetime.fromtimestamp(0, tz=UTC)


def _jsonable_header(header: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in header.items() if k != "created"}
    out["created"] = header["created"].isoformat()
    parsed: dict[str, Any] = json.loads(json.dumps(out, default=str))
    return parsed


def _uid(*parts: str) -> str:
    """A stable id for an event or message (Inspect would draw a random one)."""
    return uuid.uuid5(NAMESPACE, "/".join(parts)).hex[:22]


def _short_id(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:22]


def _slug(cell_key: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", cell_key).strip("-")
    return (slug or "cell")[:80]


def _decode(text: Any) -> Any:
    from backchannel.analysis import decode_json

    value = decode_json(text)
    return dict(value) if isinstance(value, dict) else value


def _missing(value: Any) -> bool:
    return value is None or bool(pd.isna(value))
