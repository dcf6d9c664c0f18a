"""The discussion's cells come from the design: rows per level of every declared factor, worked
out by hand on a small run, and every setting used as a two-level factor gives its own rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from conftest import discussion_experiment

import backchannel as bc
from backchannel.analysis import Design, RunTables, separation_problems
from backchannel.paradigms.discussion import Discussion, DiscussionMetrics, discussion_metrics
from backchannel.testing import check_paradigm

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _probe(c: str, r: int, a: str, t: str, s: str = "ok") -> dict[str, Any]:
    return {"conversation_id": c, "kind": "probe", "name": "answer", "round": r, "agent": a,
            "text": t, "status": s}  # fmt: skip


def factor_tables() -> RunTables:
    """Four conversations in three cells of `memory_rounds` (1, 2, 5).

    c1 (1): A "Paris" -> "paris!" kept, B "Lyon" -> "Paris" moved: change 1/2, agreement 2/2.
    c3 (1): A "x" -> "x" kept, B "y" -> "x" moved: change 1/2, agreement 2/2.
    c2 (2): A "Rome" -> "Milan" moved, B fails at checkpoint 1: change 1/1, agreement 1/1, one
        failed probe.
    c4 (5): failed before any probe: a cell with no figures, reported rather than dropped.
    Cell 1: change (0.5 + 0.5) / 2 = 0.5, agreement 1, n 2; cell 2: change 1, agreement 1, n 1,
    one failed probe; cell 5: no conversation with probes, both rates skipped.
    """
    events = pd.DataFrame(
        [
            _probe("c1", 0, "A", "Paris"),
            _probe("c1", 0, "B", "Lyon"),
            _probe("c1", 1, "A", "paris!"),
            _probe("c1", 1, "B", "Paris"),
            _probe("c2", 0, "A", "Rome"),
            _probe("c2", 0, "B", "Rome"),
            _probe("c2", 1, "A", "Milan"),
            _probe("c2", 1, "B", "", "error"),
            _probe("c3", 0, "A", "x"),
            _probe("c3", 0, "B", "y"),
            _probe("c3", 1, "A", "x"),
            _probe("c3", 1, "B", "X."),
        ]
    )
    levels = {"c1": 1, "c2": 2, "c3": 1, "c4": 5}
    conversations = pd.DataFrame(
        {
            "conversation_id": list(levels),
            "status": ["done", "done", "done", "failed"],
            "cell": [json.dumps({"memory_rounds": v}) for v in levels.values()],
            "memory_rounds": list(levels.values()),
        }
    )
    empty = RunTables.empty()
    return RunTables(events, empty.labels, conversations, {"factors": ["memory_rounds"]})


def test_rows_per_level_of_a_declared_factor_worked_out_by_hand() -> None:
    metrics = discussion_metrics(factor_tables())
    assert isinstance(metrics, DiscussionMetrics)
    rows = {row.cell["memory_rounds"]: row for row in metrics.by_cell}
    assert list(rows) == [1, 2, 5]
    one, two, five = rows[1], rows[2], rows[5]
    assert (one.conversations, one.answer_change_rate.estimate) == (2, 0.5)
    assert (one.final_agreement.estimate, one.answer_change_rate.n, one.failed_probes) == (1, 2, 0)
    assert (two.conversations, two.answer_change_rate.estimate, two.failed_probes) == (1, 1.0, 1)
    assert two.final_agreement.estimate == 1.0
    assert five.conversations == 0 and five.failed_probes == 0
    assert five.answer_change_rate.estimate is None and five.answer_change_rate.skipped
    assert five.final_agreement.skipped
    # the whole-run counts and the per-conversation rows are as before
    assert (metrics.conversations, metrics.failed_probes) == (3, 1)
    assert [c.conversation_id for c in metrics.per_conversation] == ["c1", "c2", "c3"]
    assert separation_problems(metrics, Design.of(factor_tables())) == []
    # the factor comes first in each row's JSON, then the measures
    assert list(metrics.as_json()["by_cell"][0])[:2] == ["memory_rounds", "conversations"]


def test_the_headline_has_both_rates_of_every_cell() -> None:
    headline = discussion_metrics(factor_tables()).headline()
    assert headline.index == ["memory_rounds"]
    found = {(v.cell["memory_rounds"], v.measure): v.estimate for v in headline.rows}
    assert found[(1, "answer change rate")] == 0.5 and found[(2, "final agreement")] == 1.0
    assert found[(5, "answer change rate")] is None
    assert len(headline.pivot()) == 3


def _levels() -> dict[str, list[Any]]:
    """Two valid levels of every setting a factor may vary."""
    return {
        "model": ["sim", "sim#other"],
        "agents": [2, 3],
        "rounds": [1, 2],
        "memory_rounds": [1, 2],
        "order": ["shuffled", "fixed"],
        "temperature": [0.5, 0.7],
        "max_tokens": [32, 64],
        "probe_max_tokens": [16, 24],
    }


@pytest.mark.slow
def test_every_setting_as_a_two_level_factor_gives_rows_per_level(tmp_path: Path) -> None:
    experiment = tmp_path / "small.yaml"
    data = discussion_experiment(factors={})
    data["settings"]["model"] = "sim"
    experiment.write_text(yaml.safe_dump(data))
    levels = _levels()
    assert set(levels) == set(Discussion.factors())  # every setting that can be a factor
    assert check_paradigm(experiment, tmp_path / "check", factors=levels) == []


def test_the_example_passes_the_paradigm_check_and_separates_its_factor(tmp_path: Path) -> None:
    example = EXAMPLES / "discussion.yaml"
    assert check_paradigm(example, tmp_path / "check", limit=4) == []
    run = bc.run(example, tmp_path / "run", model="sim")
    metrics = run.metrics()
    design = Design.of(run.tables)
    assert design.factors == tuple(yaml.safe_load(example.read_text())["factors"])
    assert separation_problems(metrics, design) == []
    assert [row.cell for row in metrics.by_cell] == [{"model": "sim"}]
