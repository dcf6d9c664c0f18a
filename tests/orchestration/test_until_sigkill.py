"""Kill `backchannel run --until` with SIGKILL mid-way, run the same command again, and get the
same batches, looks and stop as an uninterrupted run, with no conversation stored twice.

The design is peer pressure on `sim/population` with a planted effect (the stopping benchmark's
design, smaller), so the looks read the real headline contrast (`fpi_gap`); the target is out of
reach, so the run goes to its ceiling and every look is compared.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import done_count

from backchannel.store import RunStore

pytestmark = pytest.mark.slow

BACKCHANNEL = str(Path(sys.executable).parent / "backchannel")
ITEMS, CEILING = 4, 12
CONVERSATIONS = 2 * ITEMS * CEILING  # two cells (k = 0, 1)
UNTIL = "fpi_gap.halfwidth<=0.001"


def experiment_file(directory: Path) -> Path:
    path = directory / "until.yaml"
    design = {
        "name": "until-sigkill",
        "paradigm": "peer_pressure",
        "seed": 5,
        "replicates": CEILING,
        "factors": {"model": ["sim/population"], "k": [0, 1]},
        "settings": {
            "datasets": [{"name": "counterfact", "limit": ITEMS}],
            "n_agents": 3,
            "rounds": 2,
            "memory_rounds": 2,
            "judge": {"kind": "rule"},
        },
        "stopping": {"batch": 1, "first": 2},
        "population": {"peer_pressure": {"adopt": 0.5, "peer_weight": 0.0}},
    }
    path.write_text(yaml.safe_dump(design), encoding="utf-8")
    return path


def command(experiment: Path, run: Path) -> list[str]:
    return [BACKCHANNEL, "run", str(experiment), "-o", str(run), "--until", UNTIL]


def stopping_record(run: Path) -> tuple[dict[str, Any], list[str]]:
    store = RunStore(run, readonly=True)
    try:
        return store.manifest()["stopping"], sorted(store.finished_ids())
    finally:
        store.close()


def comparable(looks: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a look decides and reads: its size, its calls, its contrasts and its stop."""
    return [
        (look["replicates"], look["conversations"], look["calls"], look["contrasts"], look["stop"])
        for look in looks
    ]


def test_resume_after_sigkill_continues_the_same_batches_and_looks(tmp_path: Path) -> None:
    experiment = experiment_file(tmp_path)
    full = subprocess.run(command(experiment, tmp_path / "full"), capture_output=True, text=True)
    assert full.returncode == 0, full.stderr
    expected, expected_ids = stopping_record(tmp_path / "full")
    assert expected["stopped"] == "ceiling" and len(expected_ids) == CONVERSATIONS
    assert len(expected["looks"]) == CEILING - 2 + 1  # first look at 2 replicates, then one each

    killed = tmp_path / "killed"
    process = subprocess.Popen(
        command(experiment, killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while done_count(killed) < CONVERSATIONS // 3 and time.monotonic() < deadline:
        if process.poll() is not None:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    stored_at_kill = done_count(killed)
    assert 0 < stored_at_kill < CONVERSATIONS, "the run must be killed mid-way"

    resumed = subprocess.run(command(experiment, killed), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    record, ids = stopping_record(killed)
    assert ids == expected_ids  # every conversation once, the same ones
    assert record["stopped"] == "ceiling"
    assert comparable(record["looks"]) == comparable(expected["looks"])
