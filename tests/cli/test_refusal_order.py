"""A refused run writes nothing: a base URL that serves no OpenAI-compatible API (its /models
answers 404) is refused before the run directory exists, and a run refused because another
process holds the directory, or because it is another experiment's, leaves every byte of it as
it was."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke


def http(base_url: str) -> dict[str, object]:
    return discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": base_url, "api_key": "k"}],
        retry={"max_retries": 0},
    )


@pytest.mark.parametrize("path", ["", "/", "/api", "/v2"])
def test_a_base_url_whose_models_answer_404_is_refused_before_anything_is_written(
    path: str,
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server()
    root = server.base_url.removesuffix("/v1")
    run = tmp_path / "run"
    result = invoke("run", write_experiment(http(root + path)), "-o", run)
    assert result.exit_code == 1
    message = result.stderr.replace("\n", " ")
    assert "answered 404 to GET" in message and "/models" in message
    assert "usually end in /v1" in message and "nothing was written" in message
    assert "Traceback" not in result.stderr
    assert not run.exists()
    assert server.server.requests == []  # no chat call was made either


def test_the_same_server_with_v1_runs(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server()
    result = invoke("run", write_experiment(http(server.base_url)), "-o", tmp_path / "run")
    assert result.exit_code == 0, result.stderr


def snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file's digest and modification time."""
    return {
        path.name: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(directory.iterdir())
        if path.is_file()
    }


HOLD = """
import sys, time
from pathlib import Path
from backchannel.store import RunStore
store = RunStore(Path(sys.argv[1]))
store.lock()
print("holding", flush=True)
sys.stdin.readline()
store.close()
"""


def test_a_run_refused_by_another_process_touches_no_byte_of_the_directory(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path, run = write_experiment(), tmp_path / "run"
    assert invoke("run", path, "-o", run, "--limit", "1").exit_code == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        before = snapshot(run)
        assert {"run.sqlite", "run.sqlite-wal", "cache.sqlite", ".lock"} <= set(before)
        for attempt in (["--limit", "2"], []):
            refused = invoke("run", path, "-o", run, *attempt)
            assert refused.exit_code == 2
            assert f"another backchannel process is running in {run}" in refused.stderr
            assert snapshot(run) == before
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    resumed = invoke("run", path, "-o", run)
    assert resumed.exit_code == 0, resumed.stderr


def test_a_run_of_another_experiment_touches_no_byte_of_the_directory(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run).exit_code == 0
    before = snapshot(run)
    other = write_experiment(discussion_experiment(seed=99), name="other.yaml")
    refused = invoke("run", other, "-o", run)
    assert refused.exit_code == 2
    assert "holds a run of a different experiment" in refused.stderr
    assert snapshot(run) == before
