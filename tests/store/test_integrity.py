"""Damaged stores are detected before anything is written; read commands work on a read-only
copy of a run directory; exports replace the folder's tables; incomplete runs say so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel._sqlite import damage
from backchannel.analysis import RunTables
from backchannel.errors import RunDirectoryError
from backchannel.store import RunStore, incomplete_summary

BACKCHANNEL = str(Path(sys.executable).parent / "backchannel")


def finished_run(write: WriteExperiment, directory: Path) -> Path:
    result = invoke("run", write(discussion_experiment()), "-o", directory)
    assert result.exit_code == 0, result.stderr
    return directory


def test_damage_is_named_without_touching_the_file(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    database = run / "run.sqlite"
    assert damage(database) is None
    original = database.read_bytes()
    for content, words in [
        (b"", "is empty (0 bytes)"),
        (b"garbage" * 50, "is not an SQLite database"),
        (original[: len(original) // 3], "damaged"),
    ]:
        database.write_bytes(content)
        problem = damage(database)
        assert problem is not None and words in problem
        with pytest.raises(RunDirectoryError, match="left untouched"):
            RunStore(database.parent, create=True)
        assert database.read_bytes() == content  # never written into
        assert not (run / "run.sqlite-wal").exists()


def test_a_damaged_store_says_what_can_be_salvaged(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    database = run / "run.sqlite"
    data = bytearray(database.read_bytes())
    # Break one page after the first few: SQLite's quick_check fails, the events stay readable.
    page = 4096
    data[-page:] = b"\xff" * page
    database.write_bytes(bytes(data))
    with pytest.raises(RunDirectoryError) as raised:
        RunStore(run, readonly=True)
    message = str(raised.value)
    assert "left untouched" in message
    assert "run again into a new -o directory" in message


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_read_commands_write_nothing_into_a_settled_run(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    before = snapshot(run)
    for args in (
        ["status", run],
        ["metrics", run],
        ["report", run, "-o", tmp_path / "report"],
        ["export", run, "-o", tmp_path / "tables"],
        ["export", run, "-o", tmp_path / "csv", "--format", "csv"],
    ):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.stderr)
    assert snapshot(run) == before


def unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not unshare_works(), reason="needs user and mount namespaces (unshare -rm)")
def test_read_commands_work_on_a_read_only_file_system(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    experiment = write_experiment(discussion_experiment(), name="other.yaml")
    # A run killed mid-way leaves its write-ahead log: the read-only copy must still be read.
    out = tmp_path / "out"
    out.mkdir()
    script = " && ".join(
        [
            f"mount --bind -o ro {run} {run}",
            f"touch {run}/probe 2>/dev/null && exit 9 || true",
            f"{BACKCHANNEL} status {run}",
            f"{BACKCHANNEL} metrics {run} > /dev/null",
            f"{BACKCHANNEL} export {run} -o {out}/tables",
            f"{BACKCHANNEL} report {run} -o {out}/report",
            f"{{ {BACKCHANNEL} report {run}; test $? -eq 2; }}",
            f"{{ {BACKCHANNEL} run {experiment} -o {run}/new; test $? -eq 2; }}",
        ]
    )
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "conversations: 2 done, 0 incomplete, 0 failed" in result.stdout
    assert "cannot write the report into" in result.stderr
    assert "(Read-only file system); choose a writable place with -o" in result.stderr
    assert "Traceback" not in result.stderr
    assert (out / "report" / "report.html").is_file()
    assert len(RunTables.from_directory(out / "tables").events) > 0


def test_an_export_replaces_the_folders_tables_and_cleans_stale_staging(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    out = tmp_path / "tables"
    assert invoke("export", run, "-o", out).exit_code == 0
    (out / ".export-killed").mkdir()
    (out / ".export-killed" / "events.parquet").write_bytes(b"half")
    (out / "notes.txt").write_text("mine")
    assert invoke("export", run, "-o", out, "--format", "csv").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "conversations.csv",
        "events.csv",
        "labels.csv",
        "manifest.json",
        "notes.txt",  # not a table: kept
        "prompts.csv",
    ]
    tables = RunTables.from_directory(out)
    assert len(tables.events) > 0


def test_an_incomplete_run_is_flagged_in_status_export_and_report(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(faults=[("status", 500)])
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": server.base_url, "api_key": "sk-test"}],
        retry={"max_retries": 0},
    )
    run = tmp_path / "run"
    result = invoke("run", write_experiment(data), "-o", run, "--concurrency", "1")
    assert result.exit_code == 1
    store = RunStore(run, readonly=True)
    try:
        state = store.run_state()
    finally:
        store.close()
    assert state == {
        "complete": False,
        "running": False,
        "done": 1,
        "incomplete": 1,
        "failed": 0,
        "not_started": 0,
    }
    summary = incomplete_summary(state)
    assert summary is not None and "1 incomplete conversations beside 1 done" in summary

    status = invoke("status", run)
    assert "This run is not complete" in status.stderr
    exported = invoke("export", run, "-o", tmp_path / "tables")
    assert "run_state" in exported.stderr
    manifest = RunTables.from_directory(tmp_path / "tables").manifest
    assert manifest["run_state"]["complete"] is False
    assert manifest["run_state"]["incomplete"] == 1
    report = invoke("report", run)
    assert report.exit_code == 0, report.stderr
    html = (run / "report" / "report.html").read_text()
    banner = html.index('class="note banner"')
    assert banner < html.index("<section")  # at the top, before any section
    assert "This run is not complete" in html

    # Finished by a second run, the flags clear.
    again = invoke("run", write_experiment(data), "-o", run)
    assert again.exit_code == 0, again.stderr
    assert invoke("export", run, "-o", tmp_path / "tables").exit_code == 0
    assert RunTables.from_directory(tmp_path / "tables").manifest["run_state"]["complete"]


def test_a_run_in_progress_is_reported_as_running(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = finished_run(write_experiment, tmp_path / "run")
    holder = RunStore(run, create=True)
    holder.lock()
    try:
        reader = RunStore(run, readonly=True)
        try:
            state = reader.run_state()
        finally:
            reader.close()
    finally:
        holder.close()
    assert state["running"] is True and state["complete"] is False
    assert "still going" in (incomplete_summary(state) or "")
