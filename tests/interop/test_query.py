"""SQL over many runs: one DuckDB query over two runs gives each run's own `metrics` figures,
from run directories and Parquet exports alike, and never writes to a run."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke

import backchannel as bc
from backchannel.errors import ConfigError, RunDirectoryError

# The peer-pressure time course (`metrics`: time_course.by_checkpoint): per cell and checkpoint,
# the mean over finished conversations of the share of honest agents whose valid answer probe
# the judge labelled `manipulated`, and how many conversations were probed there.
TIME_COURSE = """
WITH answers AS (
    SELECT e.run, e.conversation_id, e.round AS checkpoint, l.label
    FROM events e
    JOIN labels l ON l.run = e.run AND l.conversation_id = e.conversation_id
        AND l.event_seq = e.seq AND l.judge = 'rule'
    JOIN conversations c ON c.run = e.run AND c.conversation_id = e.conversation_id
    WHERE c.status = 'done' AND e.kind = 'probe' AND e.channel = 'private'
        AND e.name = 'answer' AND e.role = 'honest' AND e.status = 'ok'
        AND l.status = 'ok' AND l.label IS NOT NULL
), shares AS (
    SELECT run, conversation_id, checkpoint,
        SUM(CASE WHEN label = 'manipulated' THEN 1 ELSE 0 END) / COUNT(*) AS infection
    FROM answers GROUP BY run, conversation_id, checkpoint
)
SELECT s.run, c.model, c.k, s.checkpoint, AVG(s.infection) AS infection,
    COUNT(*) AS n_conversations
FROM shares s JOIN conversations c USING (run, conversation_id)
GROUP BY s.run, c.model, c.k, s.checkpoint
ORDER BY s.run, c.model, c.k, s.checkpoint
"""
KEYS = ["model", "k", "checkpoint"]


def metrics_time_course(run: Path) -> pd.DataFrame:
    result = invoke("metrics", run, "--json")
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)["time_course"]["by_checkpoint"]
    return pd.DataFrame(records)[[*KEYS, "infection", "n_conversations"]]


def check_against_metrics(found: pd.DataFrame, runs: dict[str, Path]) -> None:
    assert sorted(found["run"].unique()) == sorted(runs)
    for label, path in runs.items():
        mine = found[found["run"] == label].drop(columns="run").reset_index(drop=True)
        expected = metrics_time_course(path)
        assert len(expected) == 6  # 2 cells x checkpoints 0..2
        pd.testing.assert_frame_equal(mine, expected, check_dtype=False, check_exact=True)


def test_one_query_over_two_runs_gives_each_runs_metrics(
    quickstart_run: Path, reseeded_run: Path
) -> None:
    runs = {"seed7": quickstart_run, "seed8": reseeded_run}
    with bc.open_runs(runs) as opened:
        found = opened.sql(TIME_COURSE)
        assert set(opened.tables) == {"events", "labels", "conversations", "runs"}
        seeds = opened.sql("SELECT run, seed FROM runs ORDER BY run")
        texts = opened.sql(
            "SELECT run, string_agg(text, '|' ORDER BY conversation_id, seq) AS texts "
            "FROM events GROUP BY run ORDER BY run"
        )
    check_against_metrics(found, runs)
    assert seeds.to_dict("records") == [{"run": "seed7", "seed": 7}, {"run": "seed8", "seed": 8}]
    # the two runs differ (another seed draws other turns), so the query tells them apart
    assert texts["texts"].nunique() == 2


def test_parquet_exports_and_run_directories_give_the_same_answer(
    quickstart_run: Path, reseeded_run: Path, tmp_path: Path
) -> None:
    exported = tmp_path / "seed8"
    assert invoke("export", reseeded_run, "-o", exported).exit_code == 0
    runs = {"seed7": quickstart_run, "seed8": exported}
    with bc.open_runs(runs) as opened:
        found = opened.sql(TIME_COURSE)
    check_against_metrics(found, {"seed7": quickstart_run, "seed8": reseeded_run})


def test_the_command_prints_the_result_as_csv_json_or_a_table(
    quickstart_run: Path, reseeded_run: Path, tmp_path: Path
) -> None:
    exported = tmp_path / "copy"
    assert invoke("export", reseeded_run, "-o", exported).exit_code == 0
    sql = "SELECT run, COUNT(*) AS n FROM events GROUP BY run ORDER BY run"
    csv = invoke("query", quickstart_run, exported, "--sql", sql, "--csv")
    assert csv.exit_code == 0, csv.stderr
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert frame.to_dict("records") == [{"run": "copy", "n": 58}, {"run": "run", "n": 58}]
    as_json = invoke("query", quickstart_run, exported, "--sql", sql, "--json")
    assert json.loads(as_json.stdout) == frame.to_dict("records")
    table = invoke("query", quickstart_run, exported, "--sql", sql)
    assert table.exit_code == 0 and "(2 rows)" in table.stdout and "copy" in table.stdout


def test_labels_clash_falls_back_to_the_path(quickstart_run: Path, reseeded_run: Path) -> None:
    # both fixtures' folders are called `run`: each is labelled by its path instead
    with bc.open_runs([quickstart_run, reseeded_run]) as opened:
        labels = opened.sql("SELECT DISTINCT run FROM conversations ORDER BY run")["run"].tolist()
    assert labels == sorted([str(quickstart_run), str(reseeded_run)])
    with pytest.raises(ConfigError, match="given twice"):
        bc.open_runs([quickstart_run, quickstart_run])


def test_paradigm_tables_are_views_too(testimony_run: Path, hand_run: Path) -> None:
    with bc.open_runs({"t": testimony_run, "h": hand_run}) as opened:
        assert "citations" in opened.tables
        counts = opened.sql(
            "SELECT run, COUNT(*) AS n FROM conversations GROUP BY run ORDER BY run"
        )
        channels = opened.sql(
            "SELECT channel, COUNT(*) AS n FROM events WHERE run = 'h' GROUP BY ALL ORDER BY ALL"
        )
        factors = opened.sql("SELECT DISTINCT condition FROM conversations WHERE run = 'h'")
    assert counts.to_dict("records") == [{"run": "h", "n": 4}, {"run": "t", "n": 4}]
    assert channels.to_dict("records") == [
        {"channel": "direct", "n": 1},
        {"channel": "private", "n": 2},
        {"channel": "public", "n": 5},
    ]
    assert factors["condition"].isna().all()  # a factor one run lacks is null in the other


def test_queries_never_write_to_a_run(quickstart_run: Path, tmp_path: Path) -> None:
    exported = tmp_path / "parquet"
    assert invoke("export", quickstart_run, "-o", exported).exit_code == 0

    def digest() -> dict[str, str]:
        files = [*quickstart_run.iterdir(), *exported.iterdir()]
        return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}

    before = digest()
    with bc.open_runs({"a": quickstart_run, "b": exported}) as opened:
        opened.sql("CREATE TABLE scratch AS SELECT * FROM events")
        with pytest.raises(ConfigError, match="the query failed"):
            opened.sql("DROP VIEW missing_view")
    assert digest() == before


def test_bad_inputs_are_one_clear_line(tmp_path: Path, quickstart_run: Path) -> None:
    csv = tmp_path / "csv"
    assert invoke("export", quickstart_run, "--format", "csv", "-o", csv).exit_code == 0
    result = invoke("query", csv, "--sql", "SELECT 1")
    assert result.exit_code == 2 and "holds a CSV export" in result.stderr
    result = invoke("query", tmp_path, "--sql", "SELECT 1")
    assert result.exit_code == 2 and "neither a run directory" in result.stderr
    result = invoke("query", quickstart_run, "--sql", "SELECT nope FROM events")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: the query failed: Binder Error")
    assert len(result.stderr.strip().splitlines()) == 1
    result = invoke("query", quickstart_run, "--sql", "SELECT 1", "--csv", "--json")
    assert result.exit_code == 2 and "not both" in result.stderr
    with pytest.raises(RunDirectoryError):
        bc.open_runs([tmp_path / "missing"])
