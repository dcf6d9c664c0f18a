"""The store keeps all three channels, and a store written before `direct` existed is upgraded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item
from backchannel.store import DATABASE_NAME, SCHEMA_VERSION, RunStore
from backchannel.store._schema import SCHEMA_V3

SPEC = ConversationSpec("all/q/0", "discussion", {}, "", Item("q"), 0, 1)


def events() -> list[Event]:
    return [
        Event(0, "message", "turn", 1, 0, "A", "participant", "public", text="hello all"),
        Event(
            1,
            "message",
            "turn",
            1,
            1,
            "B",
            "participant",
            "direct",
            text="only for A",
            meta={"recipients": ["A"]},
        ),
        Event(2, "probe", "answer", 1, None, "A", "participant", "private", text="secret"),
    ]


def test_public_direct_and_private_events_round_trip(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", create=True)
    store.commit_conversation(SPEC, 0, events(), UsageMeter(), {})
    stored = store.tables().events.sort_values("seq")
    store.close()
    assert list(stored["channel"]) == ["public", "direct", "private"]
    assert json.loads(stored["meta"].iloc[1]) == {"recipients": ["A"]}


def test_a_store_written_before_direct_existed_is_upgraded_and_keeps_its_events(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "run"
    directory.mkdir()
    # Schema version 2: today's columns, with a channel CHECK that knew only public and private.
    old_schema = SCHEMA_V3.replace("('public', 'direct', 'private')", "('public', 'private')")
    assert old_schema != SCHEMA_V3
    insert_event = (
        "INSERT INTO events (conversation_id, seq, kind, name, round, turn, agent, role, "
        "channel, text, value, status, model, prompt_tokens, completion_tokens, latency_s, "
        "cached, meta, reasoning, reasoning_tokens) VALUES "
        "('old/q/0', ?, 'message', 'turn', 1, ?, 'A', 'p', ?, 'hi', NULL, 'ok', 'sim', 1, 1, "
        "0.0, 0, '{}', 'thought', 3)"
    )
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        db.executescript(old_schema)
        db.execute(
            "INSERT INTO conversations VALUES ('old/q/0', '', '{}', 'q', 0, 1, 'done', NULL, "
            "'{}', 0, 0.0)"
        )
        db.execute(insert_event, (0, 0, "public"))
        db.execute("PRAGMA user_version = 2")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            db.execute(insert_event, (1, 1, "direct"))
    store = RunStore(directory)
    store.commit_conversation(SPEC, 1, events(), UsageMeter(), {})
    tables = store.tables()
    store.close()
    assert set(tables.events["conversation_id"]) == {"old/q/0", "all/q/0"}
    old = tables.events[tables.events["conversation_id"] == "old/q/0"]
    assert old[["text", "reasoning", "reasoning_tokens"]].values.tolist() == [["hi", "thought", 3]]
    assert "direct" in set(tables.events["channel"])
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        # Deleting a conversation still deletes its events: the moved table kept its key.
        db.execute("PRAGMA foreign_keys=ON")
        (conv,) = db.execute("SELECT conv FROM conversations WHERE conversation_id = 'old/q/0'")
        db.execute("DELETE FROM conversations WHERE conv = ?", conv)
        assert db.execute("SELECT COUNT(*) FROM events WHERE conv = ?", conv).fetchone()[0] == 0
