"""The read-only run reader: paging, sorting, filters, search, live runs and unreadable runs."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from backchannel.backends import UsageMeter
from backchannel.store import RunStore
from backchannel.view import BadQuery, ListQuery, RunReader, RunUnreadable

from ._build import (
    ITEM,
    JUDGE,
    P_NUL,
    commit,
    peer_pressure_conversation,
    peer_pressure_run,
    plain_conversation,
    prompt_text,
    reasoning_text,
)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return peer_pressure_run(tmp_path / "run")


def ids(page: dict) -> list[str]:
    return [c["conversation_id"] for c in page["conversations"]]


def test_pages_follow_run_order_and_report_the_total(run: Path) -> None:
    reader = RunReader(run)
    first = reader.page(ListQuery(limit=3))
    second = reader.page(ListQuery(offset=3, limit=3))
    last = reader.page(ListQuery(offset=6, limit=3))
    assert first["total"] == second["total"] == last["total"] == 7
    assert ids(first) == [f"k=1/{ITEM}/0", "k=0/p0/0", "k=1/p1/0"]
    assert ids(second) == ["k=0/p2/0", "k=1/p3/0", "k=0/p4/0"]
    assert ids(last) == ["k=1/p5/0"]
    reader.close()


def test_filters_by_status_factor_item_and_text(run: Path) -> None:
    reader = RunReader(run)
    assert ids(reader.page(ListQuery(status="failed"))) == ["k=1/p5/0"]
    assert ids(reader.page(ListQuery(factors={"k": "0"}))) == ["k=0/p0/0", "k=0/p2/0", "k=0/p4/0"]
    assert ids(reader.page(ListQuery(factors={"k": "1"}, status="done"))) == [
        f"k=1/{ITEM}/0",
        "k=1/p1/0",
        "k=1/p3/0",
    ]
    assert ids(reader.page(ListQuery(item="p3"))) == ["k=1/p3/0"]
    # full text: a message, the item's question (meta), and LIKE wildcards taken literally
    assert ids(reader.page(ListQuery(text="plain text 2"))) == ["k=0/p2/0"]
    assert ids(reader.page(ListQuery(text="question p4"))) == ["k=0/p4/0"]
    assert ids(reader.page(ListQuery(text="before\x00after"))) == [f"k=1/{ITEM}/0"]
    assert reader.page(ListQuery(text="plain%")).get("total") == 0
    assert reader.page(ListQuery(text="_")).get("total") == 0
    reader.close()


def test_sorts_by_columns_and_factor_levels(run: Path) -> None:
    reader = RunReader(run)
    by_k = ids(reader.page(ListQuery(sort="factor:k", descending=True, limit=4)))
    assert by_k == ["k=1/p5/0", "k=1/p3/0", "k=1/p1/0", f"k=1/{ITEM}/0"]
    by_item = ids(reader.page(ListQuery(sort="item_id", limit=2)))
    assert by_item == [f"k=1/{ITEM}/0", "k=0/p0/0"]  # "<" sorts before "p"
    reader.close()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sort": "evil; DROP TABLE events"}, "cannot sort by"),
        ({"limit": "0"}, "limit 0 is out of range"),
        ({"limit": "many"}, "limit must be a whole number"),
        ({"offset": "-1"}, "offset -1 is negative"),
        ({"status": "finished"}, "unknown status"),
        ({"f.k": "not json"}, "must be JSON"),
        ({"f.nope": "1"}, "the run has no factor 'nope'"),
    ],
)
def test_bad_list_requests_are_refused_with_the_fix(run: Path, params: dict, message: str) -> None:
    reader = RunReader(run)
    with pytest.raises(BadQuery, match=message):
        reader.page(ListQuery.from_params(params))
    reader.close()


def test_a_conversation_has_its_events_and_labels_and_prompts_on_request(run: Path) -> None:
    reader = RunReader(run)
    found = reader.conversation(f"k=1/{ITEM}/0")
    assert found is not None
    events = found["events"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    nul = next(e for e in events if e["text"] == P_NUL)
    assert nul["labels"][0]["judge"] == JUDGE and nul["labels"][0]["label"] == "hedge"
    assert nul["has_prompt"] and "prompt" not in nul and "prompt" not in nul["meta"]
    detail = reader.event(f"k=1/{ITEM}/0", nul["seq"])
    assert detail is not None
    assert detail["prompt"][1] == {"role": "user", "content": prompt_text("Dave", nul["seq"])}
    assert detail["reasoning"] == reasoning_text("Dave", nul["seq"])
    assert reader.conversation("k=9/none/0") is None
    assert reader.event(f"k=1/{ITEM}/0", 999) is None
    reader.close()


def test_the_summary_has_design_counts_usage_and_no_keys(run: Path) -> None:
    summary = RunReader(run).summary()
    assert summary["factors"] == {"k": [0, 1]}
    assert summary["counts"] == {"done": 6, "incomplete": 0, "failed": 1, "total": 7}
    assert summary["usage"][0]["calls"] == (1 + 3 * 3 + 4 * 2) + 6  # the first one, six plain
    assert "SECRET-KEY" not in str(summary)
    assert summary["endpoints"][0]["api_key_env"] == "MY_KEY"
    assert [c["key"] for c in summary["columns"]] == [
        "initial",
        "fpi",
        "hidden_infections",
        "silent_knowers",
    ]


def test_new_conversations_show_up_while_the_run_is_written(run: Path) -> None:
    reader = RunReader(run)
    assert reader.page(ListQuery())["total"] == 7
    store = RunStore(run)
    commit(store, plain_conversation("late", 0), 7)
    assert reader.page(ListQuery())["total"] == 8
    assert ids(reader.page(ListQuery(item="late"))) == ["k=0/late/0"]
    store.close()
    reader.close()


def test_reading_never_changes_the_run_store(run: Path) -> None:
    database = run / "run.sqlite"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    files = sorted(p.name for p in run.iterdir())
    reader = RunReader(run)
    reader.page(ListQuery(text="x"))
    reader.conversation(f"k=1/{ITEM}/0")
    with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
        reader.db.execute("DELETE FROM events")
    reader.headline()
    reader.close()
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in run.iterdir()) == files  # no -wal or -shm written beside it


def test_missing_damaged_and_foreign_runs_are_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(RunUnreadable, match="is not a directory"):
        RunReader(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunUnreadable, match=r"no run\.sqlite"):
        RunReader(tmp_path / "empty")
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "run.sqlite").write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(RunUnreadable, match="damaged"):
        RunReader(damaged)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    db = sqlite3.connect(foreign / "run.sqlite")
    db.execute("CREATE TABLE manifest (key TEXT)")
    db.close()
    with pytest.raises(RunUnreadable, match="lacks the table"):
        RunReader(foreign)
    newer = tmp_path / "newer"
    RunStore(newer, create=True).close()
    db = sqlite3.connect(newer / "run.sqlite")
    db.execute("PRAGMA user_version = 999")
    db.close()
    with pytest.raises(RunUnreadable, match="newer than this backchannel"):
        RunReader(newer)


def test_sorting_by_a_metric_puts_missing_values_last_and_follows_recommits(run: Path) -> None:
    reader = RunReader(run)
    store = RunStore(run)
    # The payload conversation has FPI 1.0; plain ones have no answers (FPI None), the failed
    # one has no figures at all: all of those follow it in either direction.
    for descending in (False, True):
        page = reader.page(ListQuery(sort="metric:fpi", descending=descending, limit=3))
        assert page["total"] == 7
        assert ids(page)[0] == f"k=1/{ITEM}/0"
        assert ids(page)[1:] == ["k=0/p0/0", "k=1/p1/0"]  # run order among missing values
    assert ids(
        reader.page(ListQuery(sort="metric:hidden_infections", descending=True, limit=1))
    ) == [f"k=1/{ITEM}/0"]
    # a conversation committed again (new figures) is re-sorted, not served from a stale cache
    spec, events, labels, meta = peer_pressure_conversation(item="p0", k=0)
    honest = [replace(x, label="true") if x.label == "manipulated" else x for x in labels]
    store.commit_conversation(spec, 1, events, UsageMeter(), meta, labels=honest)
    page = reader.page(ListQuery(sort="metric:fpi", limit=2))
    assert ids(page) == ["k=0/p0/0", f"k=1/{ITEM}/0"]  # FPI 0 before FPI 1
    assert page["conversations"][0]["metrics"]["fpi"] == 0.0
    with pytest.raises(BadQuery, match="no figure 'nope'"):
        reader.page(ListQuery(sort="metric:nope"))
    store.close()
    reader.close()


def test_a_run_resumed_and_finished_between_two_requests_is_seen(run: Path) -> None:
    reader = RunReader(run)  # no run writes it now: opened as immutable
    assert reader.page(ListQuery())["total"] == 7
    store = RunStore(run)
    commit(store, plain_conversation("resumed", 1), 7)
    store.close()  # the writer is gone again, and its log with it
    assert reader.page(ListQuery(item="resumed"))["total"] == 1
    reader.close()


def test_conversations_listed_by_a_cell_and_an_outcome(tmp_path: Path) -> None:
    # Outcomes at R1 (see _build.OUTCOMES): C1 s1 decoy, s2 truth, s4 decoy; C0 s3 decoy,
    # s5 truth. "C1, decoy majority at R1" is s1 and s4.
    from ._build import testimony_outcomes_run

    reader = RunReader(testimony_outcomes_run(tmp_path / "run"))
    query = ListQuery.from_params({"f.condition": '"C1"', "m.R1": '"decoy"'})
    page = reader.page(query)
    assert page["total"] == 2
    assert [c["item_id"] for c in page["conversations"]] == ["s1", "s4"]
    assert all(c["metrics"]["R1"] == "decoy" for c in page["conversations"])
    truth = reader.page(ListQuery.from_params({"m.outcome": '"truth"'}))
    assert [c["item_id"] for c in truth["conversations"]] == ["s2", "s5"]
    # a figure filter with paging and a sort by another figure
    second = reader.page(
        ListQuery.from_params({"m.R1": '"decoy"', "limit": "1", "offset": "1", "sort": "item_id"})
    )
    assert second["total"] == 3 and [c["item_id"] for c in second["conversations"]] == ["s3"]
    numbers = reader.page(ListQuery.from_params({"m.true_final": "4"}))
    assert [c["item_id"] for c in numbers["conversations"]] == ["s2", "s5"]
    with pytest.raises(BadQuery, match="no figure 'R9'"):
        reader.page(ListQuery.from_params({"m.R9": '"decoy"'}))
    with pytest.raises(BadQuery, match="must be JSON"):
        ListQuery.from_params({"m.R1": "decoy"})
    reader.close()
