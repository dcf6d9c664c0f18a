"""SIGTERM stops `backchannel run` like Ctrl-C: a message, exit 143, every finished
conversation kept, and the same command resumes."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

BACKCHANNEL = str(Path(sys.executable).parent / "backchannel")


@pytest.fixture
def slow_server() -> Iterator[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backchannel.testing.fake_openai",
            "--latency",
            "0.2",
            "--slots",
            "2",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    yield url
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def done(run: Path) -> int:
    database = run / "run.sqlite"
    if not database.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)
        try:
            row = db.execute("SELECT COUNT(*) FROM conversations WHERE status = 'done'")
            return int(row.fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def test_sigterm_mid_run_stops_cleanly_and_the_run_resumes(
    tmp_path: Path, slow_server: str
) -> None:
    questions = [{"id": f"q{i}", "question": f"Question {i}?"} for i in range(12)]
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(
        yaml.safe_dump(
            {
                "name": "term",
                "paradigm": "discussion",
                "factors": {"model": ["openai/fake-model"]},
                "endpoints": [{"base_url": slow_server, "api_key": "k"}],
                "settings": {"agents": 2, "rounds": 1, "questions": questions},
            }
        )
    )
    run = tmp_path / "run"
    command = [BACKCHANNEL, "run", str(experiment), "-o", str(run), "--concurrency", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while done(run) < 1 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be stopped"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 143, stderr
    assert "stopped by SIGTERM: finished conversations are stored" in stderr
    assert "Traceback" not in stderr
    kept = done(run)
    assert 1 <= kept < len(questions)

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {kept} conversations already stored" in resumed.stderr
    assert done(run) == len(questions)
