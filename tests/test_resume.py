"""Kill `backchannel run` with SIGKILL mid-way, run it again, and get the same events as an
uninterrupted run, without paying again for any answer already cached."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import done_count

from backchannel.analysis import RunTables

pytestmark = pytest.mark.slow

BACKCHANNEL = str(Path(sys.executable).parent / "backchannel")
QUESTIONS = 24
CALLS_PER_CONVERSATION = 2 * 1 + 2 * 2  # 2 agents x 1 round turns + 2 agents x 2 checkpoints


@pytest.fixture
def server_url() -> Iterator[str]:
    """The fake server in its own process (so it keeps serving while runs come and go)."""
    options = ["--latency", "0.05", "--slots", "4"]
    process = subprocess.Popen(
        [sys.executable, "-m", "backchannel.testing.fake_openai", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield url
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def requests_received(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=5) as response:
        return int(json.load(response)["requests_received"])


def run_command(experiment: Path, run: Path) -> list[str]:
    return [BACKCHANNEL, "run", str(experiment), "-o", str(run), "--concurrency", "2"]


def exported_events(run: Path, directory: Path) -> pd.DataFrame:
    subprocess.run(
        [BACKCHANNEL, "export", str(run), "-o", str(directory)], check=True, capture_output=True
    )
    return RunTables.from_directory(directory).events


def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path: Path, server_url: str) -> None:
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(
        yaml.safe_dump(
            {
                "name": "resume",
                "paradigm": "discussion",
                "seed": 3,
                "factors": {"model": ["openai/fake-model"]},
                "endpoints": [{"base_url": server_url, "api_key": "sk-test"}],
                "settings": {
                    "agents": 2,
                    "rounds": 1,
                    "questions": [
                        {"id": f"q{i:02d}", "question": f"Question number {i}?"}
                        for i in range(QUESTIONS)
                    ],
                },
            }
        )
    )
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        run_command(experiment, killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while done_count(killed) < 4 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    stored_at_kill = done_count(killed)
    assert 4 <= stored_at_kill < QUESTIONS, "the run must be killed mid-way"

    with sqlite3.connect(killed / "cache.sqlite") as cache:
        cached_answers = int(cache.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    before_resume = requests_received(server_url)
    resumed = subprocess.run(run_command(experiment, killed), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {stored_at_kill} conversations already stored" in resumed.stderr
    resume_requests = requests_received(server_url) - before_resume

    before_full = requests_received(server_url)
    full = subprocess.run(run_command(experiment, tmp_path / "full"), capture_output=True)
    assert full.returncode == 0
    full_requests = requests_received(server_url) - before_full
    assert full_requests == QUESTIONS * CALLS_PER_CONVERSATION

    # Every answer cached before the kill was replayed; only the others were asked again.
    assert cached_answers >= stored_at_kill * CALLS_PER_CONVERSATION
    assert resume_requests == full_requests - cached_answers

    resumed_events = exported_events(killed, tmp_path / "export-killed")
    full_events = exported_events(tmp_path / "full", tmp_path / "export-full")
    compared = [c for c in full_events.columns if c not in ("latency_s", "cached")]
    assert len(full_events) == QUESTIONS * (CALLS_PER_CONVERSATION + 1)  # + the openings
    pd.testing.assert_frame_equal(resumed_events[compared], full_events[compared])
