"""The Ray executor on a local Ray instance on 127.0.0.1 (2 CPUs, started and stopped here):
the same events as the asyncio executor, on `sim` and over HTTP, also when a worker process is
killed mid-run; and a clear error when Ray is missing."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from backchannel import orchestration
from backchannel.analysis import RunTables
from backchannel.backends import ResponseCache, UsageMeter
from backchannel.errors import ConfigError
from backchannel.experiment import load_experiment
from backchannel.orchestration import check_executor, execute_on_ray
from backchannel.store import CACHE_NAME, RunStore, export_tables

COMPARED_OUT = ("latency_s", "cached")


def test_an_unknown_executor_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        check_executor("dask")
    check_executor("asyncio")


def test_a_missing_ray_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"pip install 'backchannel\[ray\]'"):
        check_executor("ray")


def test_a_missing_ray_is_one_line_and_exit_2(
    write_experiment: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import invoke

    path = write_experiment()
    monkeypatch.setitem(sys.modules, "ray", None)
    result = invoke("run", path, "-o", tmp_path / "run", "--executor", "ray")
    assert result.exit_code == 2
    assert "pip install 'backchannel[ray]'" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the Ray executor tests need Ray (backchannel[ray])")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    yield
    ray.shutdown()


def experiment(directory: Path, questions: int, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "name": "ray",
        "paradigm": "discussion",
        "seed": 5,
        "factors": {"model": ["sim"]},
        "settings": {
            "agents": 2,
            "rounds": 2,
            "questions": [
                {"id": f"q{i:02d}", "question": f"Question number {i}?"} for i in range(questions)
            ],
        },
        **extra,
    }
    path = directory / "experiment.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run(path: Path, directory: Path, executor: str) -> None:
    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(directory, loaded)
    try:
        outcome = asyncio.run(orchestration.run_plan(the_plan, store, directory, executor=executor))
    finally:
        store.close()
    assert outcome.counts["done"] == len(the_plan.specs)


def events(run_directory: Path, export: Path) -> pd.DataFrame:
    store = RunStore(run_directory)
    try:
        export_tables(store.tables(), export, "parquet")
        conversations = store.counts()
    finally:
        store.close()
    frame = RunTables.from_directory(export).events
    assert conversations["done"] == frame["conversation_id"].nunique()
    return frame[[c for c in frame.columns if c not in COMPARED_OUT]]


@pytest.mark.slow
def test_a_sim_design_gives_the_events_of_the_asyncio_executor(
    local_ray: None, tmp_path: Path
) -> None:
    path = experiment(tmp_path, questions=6)
    run(path, tmp_path / "asyncio", "asyncio")
    run(path, tmp_path / "ray", "ray")
    expected = events(tmp_path / "asyncio", tmp_path / "e-asyncio")
    assert len(expected) == 6 * (4 + 6 + 1)  # turns, probes at 3 checkpoints, the opening
    pd.testing.assert_frame_equal(events(tmp_path / "ray", tmp_path / "e-ray"), expected)


@pytest.mark.slow
def test_a_worker_killed_mid_run_changes_nothing(
    local_ray: None, tmp_path: Path, threaded_server: Any
) -> None:
    server = threaded_server(latency=0.02, slots=8)
    questions = 16
    path = experiment(
        tmp_path,
        questions,
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": server.base_url, "api_key": "sk-test"}],
    )
    run(path, tmp_path / "clean", "asyncio")
    clean_requests = len(server.server.requests)

    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded)
    directory = tmp_path / "killed"
    store = orchestration.open_run_directory(directory, loaded)
    cache = ResponseCache(directory / CACHE_NAME)
    pids: list[int] = []
    killed: list[int] = []

    def kill_one_when_some_are_stored(finished: int, total: int) -> None:
        if finished == 3 and not killed:
            killed.append(pids[0])
            os.kill(pids[0], signal.SIGKILL)

    try:
        counts = asyncio.run(
            execute_on_ray(
                the_plan,
                store,
                cache,
                executor="ray",
                concurrency=2,
                usage=UsageMeter(),
                on_progress=kill_one_when_some_are_stored,
                workers=2,
                on_workers=pids.extend,
            )
        )
    finally:
        cache.close()
        store.close()
    assert killed, "the worker was not killed mid-run"
    assert counts == {"done": questions, "incomplete": 0, "failed": 0}
    pd.testing.assert_frame_equal(
        events(directory, tmp_path / "e-killed"), events(tmp_path / "clean", tmp_path / "e-clean")
    )
    # Answers streamed before the kill were not asked again: at most the lost worker's calls
    # in flight (2 per worker) were repeated.
    killed_requests = len(server.server.requests) - clean_requests
    assert clean_requests <= killed_requests <= clean_requests + 2
