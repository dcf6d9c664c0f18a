"""The run store: atomic conversations, resume, manifest, export round trips."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel import orchestration
from backchannel.analysis import EVENT_COLUMNS, RunTables
from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item
from backchannel.errors import RunDirectoryError
from backchannel.experiment import load_experiment
from backchannel.store import RunStore, export_tables


def spec(name: str) -> ConversationSpec:
    return ConversationSpec(f"all/{name}/0", "discussion", {}, "", Item(name), 0, 1)


def event(seq: int, channel: str = "public") -> Event:
    return Event(seq, "message", "turn", 1, seq, "A", "participant", channel, text=f"t{seq}")


def test_a_conversation_is_stored_whole_or_not_at_all(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", create=True)
    store.commit_conversation(spec("one"), 0, [event(0), event(1)], UsageMeter(), {})
    # The second event repeats the first's seq: the whole conversation must roll back.
    with pytest.raises(Exception, match="UNIQUE"):
        store.commit_conversation(spec("two"), 1, [event(0), event(0)], UsageMeter(), {})
    assert store.counts() == {"done": 1, "incomplete": 0, "failed": 0, "events": 2}
    assert store.finished_ids() == {"all/one/0"}
    store.close()


def test_a_failed_conversation_is_replaced_when_it_later_succeeds(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", create=True)
    store.commit_conversation(spec("one"), 0, [], UsageMeter(), {}, status="failed", error="boom")
    assert store.counts() == {"done": 0, "incomplete": 0, "failed": 1, "events": 0}
    assert store.finished_ids() == set()
    usage = UsageMeter()
    usage.model("sim").calls = 2
    store.commit_conversation(spec("one"), 0, [event(0), event(1)], usage, {"k": 1})
    assert store.counts() == {"done": 1, "incomplete": 0, "failed": 0, "events": 2}
    assert store.usage().total().calls == 2
    conversations = store.tables().conversations
    assert conversations["error"].isna().all()
    assert json.loads(conversations.loc[0, "meta"]) == {"item": {}, "k": 1}
    store.close()


def test_opening_a_missing_run_directory_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(RunDirectoryError, match="is not a run directory"):
        RunStore(tmp_path / "nothing")


def run_plan(path: Path, directory: Path, limit: int | None = None) -> dict[str, int]:
    """Run (or resume) an experiment in-process; returns counts and calls made."""
    loaded = load_experiment(path)
    plan = orchestration.plan(loaded, limit)
    store = orchestration.open_run_directory(directory, loaded)
    plan.done = store.finished_ids()
    client, cache = orchestration.make_client(plan, directory, concurrency=None)

    async def main() -> dict[str, int]:
        try:
            return await orchestration.execute(plan, store, client=client, max_active=8)
        finally:
            await client.aclose()

    counts = asyncio.run(main())
    cache.close()
    store.close()
    return {**counts, "calls": client.usage.total().calls}


def test_resume_runs_only_the_conversations_not_yet_stored(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(replicates=2))
    directory = tmp_path / "run"
    # Each conversation: 2 agents x 2 rounds turns + 2 agents x 3 checkpoints probes = 10 calls.
    assert run_plan(path, directory, limit=3) == {
        "done": 3,
        "incomplete": 0,
        "failed": 0,
        "calls": 30,
    }
    assert run_plan(path, directory) == {"done": 1, "incomplete": 0, "failed": 0, "calls": 10}
    assert run_plan(path, directory) == {"done": 0, "incomplete": 0, "failed": 0, "calls": 0}
    store = RunStore(directory)
    assert store.counts() == {
        "done": 4,
        "incomplete": 0,
        "failed": 0,
        "events": 4 * 11,
    }  # 10 calls + opening
    store.close()


def test_a_different_experiment_is_refused_on_the_same_directory(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    directory = tmp_path / "run"
    run_plan(write_experiment(discussion_experiment()), directory, limit=1)
    other = write_experiment(discussion_experiment(seed=12), name="other.yaml")
    with pytest.raises(RunDirectoryError, match="holds a run of a different experiment"):
        orchestration.open_run_directory(directory, load_experiment(other))


def test_manifest_records_config_provenance_seeds_and_templates(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(endpoints=[{"base_url": "http://h/v1", "api_key": "sk-literal"}])
    path = write_experiment(data)
    directory = tmp_path / "run"
    run_plan(path, directory, limit=1)
    store = RunStore(directory)
    manifest = store.manifest()
    store.close()
    assert manifest["manifest_version"] == 1
    assert manifest["paradigm"] == "discussion" and manifest["name"] == "tiny"
    assert manifest["seed"] == 11 and manifest["factors"] == ["model"]
    assert "sk-literal" not in json.dumps(manifest)
    assert "api_key: <redacted>" in manifest["config_as_passed"]
    assert "name: tiny" in manifest["config_as_passed"]
    assert manifest["config_resolved"]["settings"]["memory_rounds"] == 5
    assert manifest["config_resolved"]["seed"] == 11
    assert set(manifest["prompt_templates"]) == {
        "opening.txt",
        "preamble.txt",
        "probe.txt",
        "system.txt",
        "turn.txt",
    }
    assert manifest["package_version"] == "0.1.0"
    source = Path(orchestration.__file__).parent
    head = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert manifest["git_commit"] == head and isinstance(manifest["git_dirty"], bool)


def nulls_as_none(frame: pd.DataFrame) -> pd.DataFrame:
    as_objects = frame.astype(object)
    return as_objects.where(as_objects.notna(), None)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_round_trips_through_run_tables(
    write_experiment: WriteExperiment, tmp_path: Path, fmt: str
) -> None:
    directory = tmp_path / "run"
    run_plan(write_experiment(), directory)
    store = RunStore(directory)
    tables = store.tables()
    store.close()
    written = export_tables(tables, tmp_path / "export", fmt)
    assert {p.name for p in written} == {
        f"events.{fmt}",
        f"labels.{fmt}",
        f"conversations.{fmt}",
        f"prompts.{fmt}",
        "manifest.json",
    }
    back = RunTables.from_directory(tmp_path / "export")
    assert back.manifest == json.loads(json.dumps(tables.manifest, default=str))
    exact = fmt == "parquet"
    # Parquet reads the events' meta column when it is first needed; CSV reads it at once.
    assert ("meta" in back.core_events.columns) == (not exact)
    for name in ("events", "labels", "conversations", "prompts"):
        original, loaded = getattr(tables, name), getattr(back, name)
        assert list(loaded.columns) == list(original.columns), name
        assert len(loaded) == len(original), name
        if exact:  # the store's categorical columns are written as text
            pd.testing.assert_frame_equal(loaded, as_text(original))
        elif len(original):  # CSV keeps values, not dtypes; every kind of null reads back as NaN
            pd.testing.assert_frame_equal(nulls_as_none(loaded), nulls_as_none(original))
    assert len(back.events) == 2 * 11  # two questions, one cell, one replicate
    assert len(back.prompts) == 2 * 10  # every event but the moderator's opening was a call
    assert back.factors == ["model"] and (back.conversations["model"] == "sim").all()


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as an export holds it: categorical columns, and the metas the store holds as
    shared strings in an object column, as text."""
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if "meta" in frame.columns and frame["meta"].dtype == object:
        categorical.append("meta")
    return frame.assign(**{c: frame[c].astype("str") for c in categorical})


def test_repeated_texts_are_held_once(write_experiment: WriteExperiment, tmp_path: Path) -> None:
    """run_id and the coded names hold a code per row, each column's categories exactly its
    distinct texts, sorted, so it sorts and groups as text; equal metas are one string."""
    directory = tmp_path / "run"
    run_plan(write_experiment(), directory)
    store = RunStore(directory)
    tables = store.tables()
    store.close()
    categorical = {
        "events": ["run_id", "kind", "name", "agent", "role", "channel", "status", "model"],
        "labels": ["run_id", "judge", "status", "model"],
        "conversations": ["run_id"],
        "prompts": ["run_id"],
    }
    for name, columns in categorical.items():
        frame = getattr(tables, name)
        if not len(frame):  # an empty table keeps the dtypes SQLite's reader gives it
            assert name == "labels"
            continue
        for column in columns:
            values = frame[column]
            assert isinstance(values.dtype, pd.CategoricalDtype), (name, column)
            held = sorted(set(values.dropna().astype("str")))
            assert list(values.cat.categories) == held, (name, column)
        texts = [c for c in frame.columns if c not in columns and frame[c].dtype != "int64"]
        assert not any(isinstance(frame[c].dtype, pd.CategoricalDtype) for c in texts), name
    metas = tables.conversations["meta"]
    assert metas.dtype == object and all(type(m) is str for m in metas)
    by_text: dict[str, str] = {}
    assert all(by_text.setdefault(m, m) is m for m in metas)  # equal metas: one string
    events = tables.events
    assert events["run_id"].astype("str").unique().tolist() == [str(tables.manifest["run_id"])]
    kinds = events["kind"].astype("str").tolist()
    assert (events["kind"] == "message").tolist() == [k == "message" for k in kinds]
    assert events.sort_values("agent", kind="stable")["agent"].astype("str").tolist() == sorted(
        events["agent"].astype("str"), key=lambda a: (a != a, a)
    )


def test_csv_export_keeps_numeric_looking_identifiers_as_text(tmp_path: Path) -> None:
    """An item id or a text that looks like a number reads back from CSV as the same string."""
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.store import export_tables

    tables = RunTables.empty()
    tables.conversations = pd.DataFrame(
        [
            {
                "run_id": "r",
                "conversation_id": "all/1/0",
                "paradigm": "discussion",
                "cell_key": "",
                "cell": "{}",
                "item_id": "1",
                "replicate": 0,
                "seed": 3,
                "status": "done",
                "error": None,
                "meta": "{}",
            }
        ]
    )
    export_tables(tables, tmp_path / "csv", "csv")
    back = RunTables.from_directory(tmp_path / "csv")
    assert back.conversations.loc[0, "item_id"] == "1"
    assert back.conversations.loc[0, "conversation_id"] == "all/1/0"
    assert back.conversations.loc[0, "replicate"] == 0


def test_event_meta_and_prompts_are_read_from_the_store_only_when_used(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", create=True)
    first = Event(0, "probe", "answer", 0, None, "A", "participant", "private", text="x",
                  meta={"prompt": [["user", "Q?"]]})  # fmt: skip
    store.commit_conversation(spec("one"), 0, [first, event(1)], UsageMeter(), {})
    store.commit_conversation(spec("two"), 1, [event(0)], UsageMeter(), {})
    tables = store.tables()
    store.close()
    assert "meta" not in tables.core_events.columns
    events = tables.events
    assert list(events.columns) == EVENT_COLUMNS
    # The prompt is not part of the events' meta: it is in the prompts table, read on its own.
    assert [json.loads(m) for m in events["meta"]] == [{}, {}, {}]
    assert events["conversation_id"].tolist() == ["all/one/0", "all/one/0", "all/two/0"]
    assert tables.prompts.values.tolist() == [
        [tables.manifest.get("run_id", "run"), "all/one/0", 0, '[["user", "Q?"]]']
    ]
