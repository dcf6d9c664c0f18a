"""Reasoning in the run store: new events columns, usage counters, the migration of a store
written before them, and the export round trip."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backchannel.analysis import EVENT_COLUMNS, RunTables
from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item
from backchannel.store import SCHEMA_VERSION, RunStore, export_tables

# The events and usage tables of schema version 1, as stores were written before reasoning.
VERSION_1 = """
CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE conversations (
    conversation_id TEXT PRIMARY KEY, cell_key TEXT NOT NULL, cell TEXT NOT NULL,
    item_id TEXT NOT NULL, replicate INTEGER NOT NULL, seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'incomplete', 'failed')), error TEXT,
    meta TEXT NOT NULL, position INTEGER NOT NULL, finished_at REAL NOT NULL);
CREATE TABLE events (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, round INTEGER NOT NULL,
    turn INTEGER, agent TEXT NOT NULL, role TEXT NOT NULL,
    channel TEXT NOT NULL CHECK (channel IN ('public', 'private')), text TEXT NOT NULL,
    value TEXT, status TEXT NOT NULL, model TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
    meta TEXT NOT NULL, PRIMARY KEY (conversation_id, seq));
CREATE TABLE labels (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    event_seq INTEGER NOT NULL, judge TEXT NOT NULL, label TEXT, status TEXT NOT NULL,
    text TEXT NOT NULL, model TEXT NOT NULL, PRIMARY KEY (conversation_id, event_seq, judge));
CREATE TABLE usage (
    conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
    model TEXT NOT NULL, calls INTEGER NOT NULL, cache_hits INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, retries INTEGER NOT NULL,
    reasks INTEGER NOT NULL, failures INTEGER NOT NULL, parse_failures INTEGER NOT NULL,
    cost REAL NOT NULL, PRIMARY KEY (conversation_id, model));
INSERT INTO manifest VALUES ('run_id', '"old"');
INSERT INTO conversations VALUES ('all/old/0', '', '{}', 'old', 0, 1, 'done', NULL, '{}', 0, 0);
INSERT INTO events VALUES ('all/old/0', 0, 'message', 'turn', 1, 0, 'A', 'participant', 'public',
    'Canberra', NULL, 'ok', 'sim', 3, 2, 0.0, 0, '{}');
INSERT INTO usage VALUES ('all/old/0', 'sim', 1, 0, 3, 2, 0, 0, 0, 0, 0.0);
PRAGMA user_version = 1;
"""


def _spec(name: str) -> ConversationSpec:
    return ConversationSpec(f"all/{name}/0", "discussion", {}, "", Item(name), 0, 1)


def _thinking_event() -> Event:
    return Event(
        0,
        "message",
        "turn",
        1,
        0,
        "A",
        "participant",
        "public",
        text="Canberra",
        completion_tokens=5,
        reasoning="It is Canberra.",
        reasoning_tokens=4,
    )


def _truncated_usage() -> UsageMeter:
    usage = UsageMeter()
    counters = usage.model("openai/r1")
    counters.calls, counters.completion_tokens = 2, 9
    counters.reasoning_tokens, counters.truncated = 7, 1
    return usage


def test_a_version_1_store_is_migrated_and_keeps_its_events(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    old = sqlite3.connect(run / "run.sqlite")
    old.executescript(VERSION_1)
    old.close()
    store = RunStore(run)
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.commit_conversation(_spec("new"), 1, [_thinking_event()], _truncated_usage(), {})
    events = store.tables().events
    assert list(events.columns) == EVENT_COLUMNS
    assert events[["text", "reasoning", "reasoning_tokens"]].values.tolist() == [
        ["Canberra", "", 0],
        ["Canberra", "It is Canberra.", 4],
    ]
    usage = store.usage()
    assert (usage.model("sim").calls, usage.model("sim").reasoning_tokens) == (1, 0)
    assert (usage.model("openai/r1").reasoning_tokens, usage.model("openai/r1").truncated) == (7, 1)
    store.close()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_reasoning_survives_the_export(tmp_path: Path, fmt: str) -> None:
    store = RunStore(tmp_path / "run", create=True)
    store.commit_conversation(_spec("one"), 0, [_thinking_event()], UsageMeter(), {})
    silent = Event(1, "probe", "answer", 1, None, "A", "participant", "private", text="5")
    store.commit_conversation(_spec("two"), 1, [silent], UsageMeter(), {})
    tables = store.tables()
    store.close()
    export_tables(tables, tmp_path / "out", fmt)  # type: ignore[arg-type]
    back = RunTables.from_directory(tmp_path / "out")
    assert back.events["reasoning"].tolist() == ["It is Canberra.", ""]
    assert back.events["reasoning_tokens"].tolist() == [4, 0]
    assert list(back.events.columns) == EVENT_COLUMNS
