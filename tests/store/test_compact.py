"""The compact store over whole runs of several paradigms: every prompt is the one the model was
sent, byte for byte; a store of schema version 3 moves into the compact form with every event,
label, usage row and prompt kept, and the move survives a crash or a kill -9 and resumes."""

from __future__ import annotations

import dataclasses
import json
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import discussion_experiment

from backchannel import run
from backchannel.analysis import RunTables
from backchannel.backends import LLMClient, Request, Route
from backchannel.store import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    RunStore,
    answer_quality,
    tables_answer_quality,
)
from backchannel.store import _rows as rows_module
from backchannel.store._rows import canonical_json

from ._v3 import write_v3

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# paradigm -> (example, --model, conversations)
RUNS = {
    "discussion": ("discussion.yaml", "sim/population", 4),
    "peer_pressure": ("peer_pressure.yaml", "sim/population", 4),
    "testimony": ("testimony_offline.yaml", None, 4),
    "dyad": ("dyad.yaml", "sim/population", 4),
    "council": ("council_housing.yaml", "sim/population", 2),
}


class Recording:
    """A backend that notes the messages of every request before passing it on."""

    def __init__(self, inner: Any, sent: list[str]) -> None:
        self._inner, self._sent = inner, sent
        self.endpoint = inner.endpoint

    async def generate(self, request: Request) -> Any:
        self._sent.append(canonical_json([[m.role, m.content] for m in request.messages]))
        return await self._inner.generate(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextmanager
def recording_requests() -> Iterator[list[str]]:
    """Every request's messages as canonical JSON, as the backends were asked them."""
    sent: list[str] = []
    real = LLMClient.route

    def route(self: LLMClient, model: str) -> Route:
        found = real(self, model)
        return dataclasses.replace(found, backend=Recording(found.backend, sent))

    LLMClient.route = route  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        LLMClient.route = real  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    """One small real run per paradigm, with the prompts its calls were sent."""
    root = tmp_path_factory.mktemp("runs")
    built = {}
    for paradigm, (example, model, limit) in RUNS.items():
        with recording_requests() as sent:
            done = run(EXAMPLES / example, root / paradigm, model=model, limit=limit)
        assert done.counts["done"] > 0 and done.counts["failed"] == 0, (paradigm, done.counts)
        built[paradigm] = (root / paradigm, sent)
    return built


def whole(directory: Path) -> RunTables:
    store = RunStore(directory, readonly=True)
    try:
        tables = store.tables()
    finally:
        store.close()
    tables.events  # noqa: B018 - reads the events' meta now
    tables.prompts  # noqa: B018
    return tables


def usage_rows(directory: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(directory / DATABASE_NAME)
    try:
        return db.execute(
            "SELECT c.conversation_id, n.name, u.calls, u.cache_hits, u.prompt_tokens, "
            "u.completion_tokens, u.retries, u.reasks, u.failures, u.parse_failures, u.cost, "
            "u.reasoning_tokens, u.truncated FROM usage u JOIN conversations c ON c.conv = u.conv "
            "JOIN names n ON n.id = u.model"
        ).fetchall()
    finally:
        db.close()


def assert_same(left: RunTables, right: RunTables) -> None:
    for name in ("events", "labels", "conversations", "prompts"):
        pd.testing.assert_frame_equal(getattr(left, name), getattr(right, name), obj=name)
    assert {k: v for k, v in left.manifest.items() if k != "run_state"} == {
        k: v for k, v in right.manifest.items() if k != "run_state"
    }


@pytest.mark.parametrize("paradigm", list(RUNS))
def test_every_stored_prompt_is_the_one_its_call_was_sent_byte_for_byte(
    runs: dict[str, tuple[Path, list[str]]], paradigm: str
) -> None:
    directory, sent = runs[paradigm]
    tables = whole(directory)
    stored = tables.prompts["prompt"].tolist()
    calls = tables.events[tables.events["model"] != ""]
    assert len(stored) == len(calls) > 0
    # Each stored prompt is exactly one request's messages (a call's last attempt).
    assert not Counter(stored) - Counter(sent)
    keys = set(zip(tables.prompts["conversation_id"], tables.prompts["seq"], strict=True))
    assert keys == set(zip(calls["conversation_id"], calls["seq"], strict=True))
    assert all("prompt" not in json.loads(m) for m in tables.events["meta"])


@pytest.mark.parametrize("paradigm", list(RUNS))
def test_the_stored_answer_counts_are_those_of_the_events(
    runs: dict[str, tuple[Path, list[str]]], paradigm: str
) -> None:
    directory, _ = runs[paradigm]
    store = RunStore(directory, readonly=True)
    try:
        kept, counts = store.answer_quality(), store.counts()
    finally:
        store.close()
    tables = whole(directory)
    assert kept == answer_quality(tables.events)
    assert counts["events"] == len(tables.events)
    # `metrics` and `report` take the store's counts instead of counting the events again,
    # until the events are replaced.
    assert tables.answer_counts == kept and tables_answer_quality(tables) == kept
    tables.events = tables.events.iloc[: len(tables.events) // 2]
    assert tables.answer_counts is None
    assert tables_answer_quality(tables) == answer_quality(tables.events)


@pytest.mark.parametrize("paradigm", list(RUNS))
def test_a_version_3_store_moves_into_the_compact_form_unchanged(
    runs: dict[str, tuple[Path, list[str]]], paradigm: str, tmp_path: Path
) -> None:
    directory, _ = runs[paradigm]
    original = whole(directory)
    old = tmp_path / "old"
    write_v3(original, old, usage_rows(directory))
    moved = whole(old)  # a read command brings the store up to date first
    assert_same(moved, original)
    assert sorted(usage_rows(old)) == sorted(usage_rows(directory))
    db = sqlite3.connect(old / DATABASE_NAME)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {n for n in names if n.startswith("v3_")}
    db.close()


def many_conversations(tmp_path: Path, conversations: int = 24) -> tuple[Path, RunTables]:
    """A version 3 store of a real run of `conversations` conversations, and its tables."""
    experiment = tmp_path / "many.yaml"
    data = discussion_experiment(replicates=conversations // 2)
    experiment.write_text(json.dumps(data))
    fresh = tmp_path / "fresh"
    run(experiment, fresh)
    original = whole(fresh)
    assert len(original.conversations) == conversations
    old = tmp_path / "old"
    write_v3(original, old, usage_rows(fresh))
    return old, original


def test_a_move_that_fails_part_way_keeps_everything_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, original = many_conversations(tmp_path)
    real = rows_module.Writer.insert
    moved: list[str] = []

    def fails_on_the_tenth(self: Any, conversation: Any, *args: Any) -> int:
        if len(moved) == 9:
            raise RuntimeError("the machine went down")
        moved.append(conversation.conversation_id)
        return real(self, conversation, *args)

    monkeypatch.setattr(rows_module.Writer, "insert", fails_on_the_tenth)
    with pytest.raises(Exception, match="the machine went down"):
        RunStore(old).close()
    db = sqlite3.connect(old / DATABASE_NAME)
    kept = db.execute("SELECT COUNT(*) FROM v3_events").fetchone()[0]
    assert kept == len(original.events)  # nothing of the old store is gone
    db.close()
    monkeypatch.undo()
    assert_same(whole(old), original)


def test_a_move_killed_at_any_batch_resumes_and_loses_no_event(tmp_path: Path) -> None:
    old, original = many_conversations(tmp_path)
    path = old / DATABASE_NAME
    child = (
        "import sqlite3, sys\n"
        "from backchannel.store._migrate import bring_up_to_date\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA journal_mode=WAL')\n"
        "db.execute('PRAGMA foreign_keys=ON')\n"
        "bring_up_to_date(db, batch=2, on_batch=lambda m, t: print(m, t, flush=True))\n"
    )
    kills = 0
    for _ in range(40):
        process = subprocess.Popen(
            [sys.executable, "-c", child, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None
        line = process.stdout.readline()  # one batch committed: kill it in the next one
        if not line:
            assert process.wait(timeout=60) == 0
            break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        db = sqlite3.connect(path)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        if "v3_events" in tables:
            assert db.execute("SELECT COUNT(*) FROM v3_events").fetchone()[0] == len(
                original.events
            )
        db.close()
    assert kills >= 3
    assert_same(whole(old), original)


def test_commands_that_show_no_prompt_read_none(
    runs: dict[str, tuple[Path, list[str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import invoke

    from backchannel.store import _lookup

    directory, _ = runs["peer_pressure"]
    parts: list[str] = []
    documents, records = rows_module.Decoder.documents, _lookup.StoredConversations._records
    each = rows_module.Decoder.each_record

    def noted_each(self: Any, part: str, *args: Any) -> Any:
        parts.append(part)
        return each(self, part, *args)

    def noted_documents(self: Any, part: str, convs: Any = None) -> Any:
        parts.append(part)
        return documents(self, part, convs)

    def noted_records(self: Any, part: str, conversation_id: str) -> Any:
        parts.append(part)
        return records(self, part, conversation_id)

    monkeypatch.setattr(rows_module.Decoder, "documents", noted_documents)
    monkeypatch.setattr(_lookup.StoredConversations, "_records", noted_records)
    monkeypatch.setattr(rows_module.Decoder, "each_record", noted_each)
    for args in (
        ["status", directory],
        ["metrics", directory, "--json"],
        ["report", directory, "-o", tmp_path / "report"],
    ):
        result = invoke(*args)
        assert result.exit_code == 0, result.stderr
    assert "prompts" not in parts and "event_meta" not in parts
    assert invoke("export", directory, "-o", tmp_path / "tables").exit_code == 0
    assert "prompts" in parts


def test_a_run_without_labels_has_the_empty_labels_table_of_schema_3(tmp_path: Path) -> None:
    """Columns of an empty table keep the object dtype SQLite's reader gives them, so the
    exported Parquet reads back as it did."""
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(json.dumps(discussion_experiment()))
    run(experiment, tmp_path / "run")
    labels = whole(tmp_path / "run").labels
    assert labels.empty
    assert all(labels[c].dtype == object for c in labels.columns if c != "run_id")
