"""`backchannel run --dry-run`, `status` and `export`: estimates match the calls a run makes."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.analysis import RunTables


def number_after(label: str, text: str) -> int:
    match = re.search(re.escape(label) + r"\s*(\d+)", text)
    assert match is not None, (label, text)
    return int(match.group(1))


def test_dry_run_estimate_equals_the_calls_a_sim_run_makes(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(factors={"model": ["sim"], "agents": [2, 3]}, replicates=2)
    data["settings"]["rounds"] = 3
    path = write_experiment(data)
    run = tmp_path / "run"
    dry = invoke("run", path, "-o", run, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert not run.exists()  # a dry run calls and writes nothing
    # Per conversation n*T turns + n*(T+1) probes: n=2 -> 6+8 = 14, n=3 -> 9+12 = 21;
    # 2 questions x 2 replicates each: 4 * (14 + 21) = 140.
    assert number_after("conversations:", dry.stdout) == 8
    assert number_after("estimated calls:", dry.stdout) == 140
    assert number_after("sim:", dry.stdout) == 140
    ran = invoke("run", path, "-o", run)
    assert ran.exit_code == 0, ran.stderr
    status = invoke("status", run)
    assert status.exit_code == 0, status.stderr
    assert (
        "conversations: 8 done, 0 incomplete, 0 failed; events: 148" in status.stdout
    )  # + 8 openings
    assert number_after("calls", status.stdout) == 140
    assert number_after("re-asks", status.stdout) == 0
    assert number_after("parse failures", status.stdout) == 0


def test_status_counts_cache_hits_of_a_rerun_into_a_new_directory(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment()
    assert invoke("run", path, "-o", tmp_path / "a").exit_code == 0
    status = invoke("status", tmp_path / "a")
    assert number_after("calls", status.stdout) == 20
    assert number_after("cache hits", status.stdout) == 0


def test_status_and_export_refuse_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    for args in (("status", tmp_path), ("export", tmp_path, "-o", tmp_path / "out")):
        result = invoke(*args)
        assert result.exit_code == 2
        assert "is not a run directory" in result.stderr
    assert not (tmp_path / "out").exists()


def test_export_writes_tables_that_metrics_can_read(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run).exit_code == 0
    result = invoke("export", run, "-o", tmp_path / "tables", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert sorted(Path(line).name for line in result.stdout.split()) == [
        "conversations.csv",
        "events.csv",
        "labels.csv",
        "manifest.json",
        "prompts.csv",
    ]
    tables = RunTables.from_directory(tmp_path / "tables")
    assert len(tables.conversations) == 2 and len(tables.events) == 22
    from_tables = invoke("metrics", "--tables", tmp_path / "tables", "--json")
    from_run = invoke("metrics", run, "--json")
    assert from_tables.exit_code == 0 and from_run.exit_code == 0
    assert from_tables.stdout == from_run.stdout
    bad = invoke("export", run, "-o", tmp_path / "x", "--format", "xlsx")
    assert bad.exit_code == 2


def test_status_shows_answers_paid_for_by_conversations_not_yet_stored(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    import sqlite3

    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run, "--limit", "1").exit_code == 0
    # A killed run leaves answers in the cache that no stored conversation accounts for.
    with sqlite3.connect(run / "cache.sqlite") as db:
        db.execute(
            "INSERT INTO responses (key, model, text, prompt_tokens, completion_tokens, "
            "finish_reason, created) VALUES ('k', 'sim', 'x', 100, 7, 'stop', 0)"
        )
    status = invoke("status", run)
    assert "response cache: 11 answers" in status.stdout


def test_metrics_with_a_judge_the_run_does_not_have_is_a_clear_error(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run, "--limit", "1").exit_code == 0
    result = invoke("metrics", run, "--judge", "nosuch")
    assert result.exit_code == 2
    # The discussion paradigm reads no judge: the option itself is refused, naming the paradigm.
    assert "--judge: the discussion paradigm does not read this option" in result.stderr
    judged = invoke("judge", run, "--judge", "rule", "--as", "r")
    assert judged.exit_code == 2 and "discussion declares no judge tasks" in judged.stderr


def test_metrics_prints_tables_and_status_says_the_run_is_simulated(tmp_path: Path) -> None:
    from backchannel.cli._metrics_view import cell

    run = tmp_path / "run"
    quickstart = Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml"
    assert invoke("run", str(quickstart), "-o", str(run), "--model", "sim").exit_code == 0
    tables = invoke("metrics", str(run))
    assert tables.exit_code == 0
    assert "Simulated run" in tables.stdout and "fpi.by_cell" in tables.stdout
    assert invoke("metrics", str(run), "--json").stdout.lstrip().startswith("{")
    status = invoke("status", str(run))
    assert "Simulated run" in status.stdout and "Models used: sim." in status.stdout.replace(
        "\n", " "
    )
    assert cell({"estimate": 0.5, "low": 0.25, "high": 0.75, "n": 4}) == "0.5 [0.25, 0.75] n=4"
    assert cell(None) == "-" and cell(1 / 3) == "0.3333"
