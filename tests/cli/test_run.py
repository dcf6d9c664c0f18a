"""`backchannel run`: clear errors and exit codes, resume, HTTP endpoints, no leaked keys."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.store import RunStore

QUICK_RETRY = {"max_retries": 1, "base_delay_s": 0.0, "max_delay_s": 0.0}


def test_config_error_exits_2_with_one_message_and_writes_nothing(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(replicates="many"))
    result = invoke("run", path, "-o", tmp_path / "run")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: invalid experiment file")
    assert "replicates: Input should be a valid integer" in result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not (tmp_path / "run").exists()


def test_bad_model_override_exits_2_and_writes_nothing(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    result = invoke("run", write_experiment(), "-o", tmp_path / "run", "--model", "gpt-4o")
    assert result.exit_code == 2
    assert "model 'gpt-4o' is not 'provider/model'" in result.stderr
    assert not (tmp_path / "run").exists()


def stored(run: Path) -> tuple[dict[str, object], dict[str, int], list[str]]:
    store = RunStore(run)
    try:
        return store.manifest(), store.counts(), sorted(store.finished_ids())
    finally:
        store.close()


def test_run_then_resume_then_refuse_another_experiment(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment()
    run = tmp_path / "run"
    first = invoke("run", path, "-o", run, "--limit", "1")
    assert first.exit_code == 0, first.stderr
    assert "stored conversations: 1 done, 0 incomplete, 0 failed" in first.stdout
    second = invoke("run", path, "-o", run)
    assert second.exit_code == 0, second.stderr
    assert "resuming: 1 conversations already stored, 1 to run" in second.stderr
    assert "stored conversations: 2 done, 0 incomplete, 0 failed" in second.stdout
    before = stored(run)
    other = write_experiment(discussion_experiment(seed=99), name="other.yaml")
    refused = invoke("run", other, "-o", run)
    assert refused.exit_code == 2
    assert "holds a run of a different experiment" in refused.stderr
    assert stored(run) == before


def test_a_directory_that_is_not_a_run_is_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    result = invoke("run", write_experiment(), "-o", busy)
    assert result.exit_code == 2
    assert "exists and is not a run directory" in result.stderr
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]


def http_experiment(base_url: str, **endpoint: object) -> dict[str, object]:
    return discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": base_url, **endpoint}],
        retry=QUICK_RETRY,
    )


def test_unreachable_server_exits_1_with_a_clear_message(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = write_experiment(http_experiment(f"http://127.0.0.1:{port}/v1", api_key_env="BC_KEY"))
    result = invoke("run", path, "-o", tmp_path / "run", env={"BC_KEY": "sk-x"})
    assert result.exit_code == 1
    assert "error: cannot connect to http://127.0.0.1:" in result.stderr
    assert "the server is unreachable, so nothing was written" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()  # checked before the run directory is created


def test_refused_key_exits_1_with_a_clear_message(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(require_api_key="sk-right")
    path = write_experiment(http_experiment(server.base_url, api_key_env="BC_KEY"))
    result = invoke("run", path, "-o", tmp_path / "run", env={"BC_KEY": "sk-wrong-key-1234"})
    assert result.exit_code == 1
    assert "refused the API key (401)" in result.stderr
    assert "sk-wrong-key-1234" not in result.stderr + result.stdout


def test_missing_key_variable_is_a_config_error(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(http_experiment("http://127.0.0.1:9/v1", api_key_env="BC_UNSET_KEY"))
    result = invoke("run", path, "-o", tmp_path / "run", env={"BC_UNSET_KEY": None})
    assert result.exit_code == 2
    assert "BC_UNSET_KEY" in result.stderr


def files_under(*directories: Path) -> list[Path]:
    return [p for d in directories for p in d.rglob("*") if p.is_file()]


def test_the_api_key_is_never_stored_exported_or_reported(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    key = "sk-very-secret-0123456789"
    literal = "sk-literal-secret-9876543210"
    server = threaded_server(require_api_key=key)
    data = http_experiment(server.base_url, api_key_env="BC_KEY")
    # A second endpoint with a literal key in the file (for models this run does not use).
    data["endpoints"].append({"models": "openai/other-*", "api_key": literal})  # type: ignore[attr-defined]
    path = write_experiment(data)
    run, env = tmp_path / "run", {"BC_KEY": key}
    result = invoke("run", path, "-o", run, env=env)
    assert result.exit_code == 0, result.stderr
    assert server.server.requests_served == 2 * 10
    for fmt in ("parquet", "csv"):
        exported = invoke("export", run, "-o", tmp_path / f"export-{fmt}", "--format", fmt)
        assert exported.exit_code == 0, exported.stderr
    reported = invoke("report", run)
    assert reported.exit_code == 0, reported.stderr
    files = files_under(run, tmp_path / "export-parquet", tmp_path / "export-csv")
    names = {p.name for p in files}
    assert {"run.sqlite", "cache.sqlite", "events.parquet", "events.csv", "manifest.json"} <= names
    assert any(p.suffix == ".html" for p in files)
    for file in files:
        content = file.read_bytes()
        assert key.encode() not in content, file
        assert literal.encode() not in content, file
    database = (run / "run.sqlite").read_bytes()
    assert b"BC_KEY" in database  # the variable's name is kept
    assert b"api_key: <redacted>" in database  # the literal key's place in config_as_passed


def test_calls_failing_after_retries_leave_conversations_incomplete_until_a_rerun(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    # QUICK_RETRY allows 1 retry, so each failing call takes two 503s. The first 4 requests fail:
    # the first two calls of the run end as error events; everything after succeeds.
    server = threaded_server(faults=[("status", 503)] * 4)
    data = http_experiment(server.base_url, api_key_env="BC_KEY")
    data["settings"]["questions"] = data["settings"]["questions"][:1]
    path = write_experiment(data)
    run = tmp_path / "run"
    first = invoke("run", path, "-o", run, "--concurrency", "1", env={"BC_KEY": "sk-x"})
    assert first.exit_code == 1, first.output
    assert "0 done, 1 incomplete, 0 failed" in first.stdout
    assert "2 call(s) failed after retries" in first.stderr
    status = invoke("status", run)
    assert "0 done, 1 incomplete, 0 failed" in status.stdout
    errors = stored_events(run)
    assert sum(status == "error" for status in errors) == 2
    second = invoke("run", path, "-o", run, "--concurrency", "1", env={"BC_KEY": "sk-x"})
    assert second.exit_code == 0, second.output
    assert "1 done, 0 incomplete, 0 failed" in second.stdout
    assert all(status == "ok" for status in stored_events(run))


def stored_events(run: Path) -> list[str]:
    from backchannel import open_run

    events = open_run(run).tables.core_events
    return events.loc[
        (events["kind"] != "message") | (events["name"] != "opening"), "status"
    ].tolist()


def test_a_model_that_cannot_be_served_is_refused_before_anything_is_written(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = invoke("run", write_experiment(), "-o", run, "--model", "sim/no-such-script")
    assert result.exit_code == 2
    assert "unknown scripted backend sim/no-such-script" in result.stderr
    assert not run.exists()
