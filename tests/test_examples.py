"""Every example experiment file validates, dry-runs, and runs a few conversations on `sim`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from backchannel.cli import app

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))


def test_examples_exist() -> None:
    names = {path.name for path in EXAMPLES}
    assert {"quickstart.yaml", "discussion.yaml"} <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_dry_run_counts_conversations(example: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(example), "-o", "unused", "--dry-run"])
    assert result.exit_code == 0, result.output
    conversations = int(result.output.split("conversations:")[1].split()[0])
    assert conversations > 0
    assert int(result.output.split("estimated calls:")[1].split()[0]) > 0


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_on_sim_and_reports(example: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", str(example), "-o", str(run), "--model", "sim", "--limit", "2"]
    )
    assert result.exit_code == 0, result.output
    status = runner.invoke(app, ["status", str(run)])
    assert "2 done, 0 incomplete, 0 failed" in status.output
    metrics = runner.invoke(app, ["metrics", str(run), "--json"])
    assert metrics.exit_code == 0, metrics.output
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert (run / "report" / "report.html").stat().st_size > 1000
