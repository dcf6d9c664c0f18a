"""`import backchannel as bc`: the quickstart on sim through the Python API only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import backchannel as bc

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml"


def test_the_quickstart_runs_and_reads_back_through_the_api(tmp_path: Path) -> None:
    run = bc.run(QUICKSTART, tmp_path / "run", model="sim")
    assert run.counts == {"done": 4, "incomplete": 0, "failed": 0}
    assert run.manifest["paradigm"] == "peer_pressure"
    # 2 cells x 2 items; n = 3, T = 2: 6 turns, (3 - k) x 3 probes, 1 opening.
    per_conversation = run.events.groupby("conversation_id").size()
    assert sorted(set(per_conversation)) == [6 + 6 + 1, 6 + 9 + 1]
    assert set(run.labels["judge"]) == {"rule"}
    assert list(run.conversations["k"].unique()) == [0, 1]
    figures = run.metrics()
    assert figures.judge == "rule"  # typed results (PeerPressureMetrics)
    assert bc.open_run(tmp_path / "run").metrics() == figures
    report = run.report(tmp_path / "report")
    assert report.name == "report.html" and report.is_file()


def test_a_second_run_on_the_same_directory_resumes(tmp_path: Path) -> None:
    first = bc.run(QUICKSTART, tmp_path / "run", model="sim", limit=2)
    assert first.counts["done"] == 2
    again = bc.run(QUICKSTART, tmp_path / "run", model="sim")
    assert again.counts["done"] == 4
    assert (again.events["cached"]).sum() == 0  # stored conversations were not run again


def test_api_errors_are_the_cli_errors(tmp_path: Path) -> None:
    with pytest.raises(bc.ConfigError, match="no such experiment file"):
        bc.run(tmp_path / "missing.yaml", tmp_path / "run")
    with pytest.raises(bc.BackchannelError, match="not a run directory"):
        bc.open_run(tmp_path)
    run = bc.run(QUICKSTART, tmp_path / "run", model="sim", limit=1)
    with pytest.raises(bc.ConfigError, match="--threshold: the peer_pressure paradigm"):
        run.metrics(threshold=0.5)


def test_the_front_door_is_small_and_importing_it_is_cheap() -> None:
    assert 15 <= len(bc.__all__) <= 32
    for name in bc.__all__:
        assert getattr(bc, name) is not None
    heavy = "('openai', 'pandas', 'scipy')"
    code = f"import sys, backchannel; print(sorted(m for m in {heavy} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
