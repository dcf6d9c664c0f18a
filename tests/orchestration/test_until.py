"""Running under a stopping rule: batches balanced over cells and items, a look after each in the
manifest, a stop at the target or at the ceiling, and a resume after a kill that continues the
same batches and looks.

The reader here is built by hand so the stopping point is known in advance: a "contrast" whose
half-width is 1 / (stored conversations) holds a bound of 1/12 once 12 conversations are stored.
The design has 2 cells x 2 questions, so one replicate is 4 conversations.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel import orchestration
from backchannel.analysis import RunTables
from backchannel.errors import RunDirectoryError
from backchannel.experiment import load_experiment
from backchannel.orchestration import Reading, Stopping, parse_target
from backchannel.store import RunStore


class Interrupted(Exception):
    """Stands for a kill: raised from inside the run, after what was committed."""


def by_count(tables: RunTables) -> Mapping[str, Reading]:
    done = tables.conversations[tables.conversations["status"] == "done"]
    n = len(done)
    return {"width": Reading(float(n), 1 / n if n else None, n)}


def experiment(write_experiment: WriteExperiment, replicates: int = 6) -> Path:
    return write_experiment(
        discussion_experiment(replicates=replicates, factors={"model": ["sim"], "block": [1, 2]})
    )


def run_until(
    path: Path,
    run: Path,
    until: str,
    *,
    batch: int = 1,
    first: int = 2,
    read: Any = by_count,
    kill_after: int | None = None,
) -> dict[str, Any]:
    """One invocation under the rule; returns the manifest's stopping record. `kill_after`:
    the invocation dies once it has committed that many conversations (none after)."""
    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(run, loaded)
    if kill_after is not None:
        commit, committed = store.commit_conversation, [0]

        def commit_until_killed(*args: Any, **kwargs: Any) -> None:
            if committed[0] == kill_after:
                raise Interrupted
            committed[0] += 1
            commit(*args, **kwargs)

        store.commit_conversation = commit_until_killed  # type: ignore[method-assign]
    try:
        the_plan.done = store.finished_ids()
        rule = Stopping(parse_target(until), batch, first, 6)
        asyncio.run(orchestration.run_until(the_plan, store, run, rule, read))
    finally:
        store.close()
    return stored(run)[0]


def stored(run: Path) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    store = RunStore(run, readonly=True)
    try:
        manifest = store.manifest()
        return manifest["stopping"], sorted(store.finished_ids()), store.run_state()
    finally:
        store.close()


def test_the_run_stops_at_the_first_look_where_the_target_holds(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    record = run_until(experiment(write_experiment), tmp_path / "run", "width.halfwidth<=0.0834")
    looks = record["looks"]
    # replicates 0-1 (8 conversations, 1/8 = 0.125), then replicate 2 (12, 1/12 = 0.0833)
    assert [(k["replicates"], k["conversations"], k["stop"]) for k in looks] == [
        (2, 8, None),
        (3, 12, "target"),
    ]
    assert looks[1]["contrasts"] == {
        "width": {"estimate": 12.0, "halfwidth": pytest.approx(1 / 12), "n": 12, "skipped": None}
    }
    assert record["stopped"] == "target"
    assert record["until"] == "width.halfwidth<=0.0834"
    assert (record["batch"], record["first"], record["ceiling"]) == (1, 2, 6)
    # discussion on sim: 2 agents x 2 rounds turns + 2 agents x 3 checkpoints = 10 calls each
    assert [k["calls"] for k in looks] == [80, 120]
    _, ids, state = stored(tmp_path / "run")
    assert len(ids) == 12 and state["complete"] and state["not_started"] == 0


def test_batches_are_balanced_over_cells_and_items(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run_until(experiment(write_experiment), tmp_path / "run", "width.halfwidth<=0.0834", batch=1)
    _, ids, _ = stored(tmp_path / "run")
    cells = Counter(i.rsplit("/", 1)[0] for i in ids)  # cell and item
    assert len(cells) == 4 and set(cells.values()) == {3}
    assert {int(i.rsplit("/", 1)[1]) for i in ids} == {0, 1, 2}  # the first replicates


def test_the_run_stops_at_the_ceiling_when_the_target_never_holds(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    record = run_until(
        experiment(write_experiment), tmp_path / "run", "width.halfwidth<=0.01", batch=2
    )
    assert [(k["replicates"], k["stop"]) for k in record["looks"]] == [
        (2, None),
        (4, None),
        (6, "ceiling"),
    ]
    assert record["stopped"] == "ceiling"
    assert len(stored(tmp_path / "run")[1]) == 24


def test_every_batch_runs_on_one_client(
    write_experiment: WriteExperiment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three looks, one client: an embedded server is loaded once for the whole run."""
    from backchannel.orchestration import _execute

    built: list[object] = []
    make_client = _execute.make_client

    def counted(*args: Any, **kwargs: Any) -> Any:
        client = make_client(*args, **kwargs)
        built.append(client[0])
        return client

    monkeypatch.setattr(_execute, "make_client", counted)
    record = run_until(
        experiment(write_experiment), tmp_path / "run", "width.halfwidth<=0.01", batch=2
    )
    assert len(record["looks"]) == 3
    assert len(built) == 1


def test_resume_after_a_kill_mid_batch_continues_the_same_batches_and_looks(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = experiment(write_experiment)
    whole = run_until(path, tmp_path / "whole", "width.halfwidth<=0.06")
    run = tmp_path / "run"
    with pytest.raises(Interrupted):  # two conversations into the second batch (replicate 2)
        run_until(path, run, "width.halfwidth<=0.06", kill_after=10)
    partial, ids, state = stored(run)
    assert [k["replicates"] for k in partial["looks"]] == [2]
    assert len(ids) == 10 and not state["complete"]
    resumed = run_until(path, run, "width.halfwidth<=0.06")
    assert resumed == whole
    assert stored(run)[1] == stored(tmp_path / "whole")[1]
    # a stopped run is complete: running it again runs and looks no more
    assert run_until(path, run, "width.halfwidth<=0.06") == whole


def test_resume_after_a_kill_before_a_look_makes_that_look(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = experiment(write_experiment)
    whole = run_until(path, tmp_path / "whole", "width.halfwidth<=0.0834")
    looked: list[int] = []

    def dies_at_the_second_look(tables: RunTables) -> Mapping[str, Reading]:
        looked.append(1)
        if len(looked) == 2:
            raise Interrupted
        return by_count(tables)

    run = tmp_path / "run"
    with pytest.raises(Interrupted):
        run_until(path, run, "width.halfwidth<=0.0834", read=dies_at_the_second_look)
    assert len(stored(run)[0]["looks"]) == 1 and len(stored(run)[1]) == 12
    assert run_until(path, run, "width.halfwidth<=0.0834") == whole


def test_another_rule_or_a_run_without_one_is_refused_on_resume(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = experiment(write_experiment)
    run = tmp_path / "run"
    record = run_until(path, run, "width.halfwidth<=0.0834")
    with pytest.raises(RunDirectoryError, match=r"stops on 'width.halfwidth<=0.0834' in batches"):
        run_until(path, run, "width.halfwidth<=0.05")
    with pytest.raises(RunDirectoryError, match="in batches of 1"):
        run_until(path, run, "width.halfwidth<=0.0834", batch=2)
    assert stored(run)[0] == record
    plain = tmp_path / "plain"
    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded, limit=2)
    store = orchestration.open_run_directory(plain, loaded)
    try:
        asyncio.run(orchestration.run_plan(the_plan, store, plain))
    finally:
        store.close()
    with pytest.raises(RunDirectoryError, match="started without --until"):
        run_until(path, plain, "width.halfwidth<=0.0834")


def test_a_contrast_without_an_interval_never_holds(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    def uncomputable(tables: RunTables) -> Mapping[str, Reading]:
        return {"width": Reading(None, None, 0, "no conversation with k=0")}

    record = run_until(
        experiment(write_experiment),
        tmp_path / "run",
        "width.halfwidth<=1",
        batch=4,
        read=uncomputable,
    )
    assert [(k["replicates"], k["stop"]) for k in record["looks"]] == [(2, None), (6, "ceiling")]
    assert record["looks"][0]["contrasts"]["width"]["skipped"] == "no conversation with k=0"
