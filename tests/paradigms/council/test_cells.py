"""A factor the run declares besides `pool` and `delphi` gets its own groups; a `threshold`
factor is applied per cell.

Hand-built run: one pool-B deliberation (B1 of test_metrics) at each level of a `threshold`
factor, 0.5 and 0.9. Firsts (values in order safety, risk tolerance, pragmatism, performance,
simplicity, creativity, fairness): a, b, a, c, a, b, c; scores .9, .8, .6, .7, .9, .5, 1.0.
Every one of the six tension pairs disagrees (safety a - risk b, safety a - creativity b,
performance c - simplicity a, pragmatism a - creativity b, pragmatism a - risk b, simplicity
a - creativity b).
- threshold 0.5: every score is >= 0.5, so all seven voices are faithful (rate 1) and the six
  pairs are genuine disagreements (credible tension rate 1).
- threshold 0.9: faithful are safety .9, simplicity .9 and fairness 1.0 (rate 3/7); every
  pair has an unfaithful side, so the six are partial (credible tension rate 0).
One run-wide threshold of 0.7 (the metrics before the factor was read per cell) gave one
group of both deliberations: voice authenticity 10/14 and a credible rate of 4/12 (two genuine
disagreements, safety - risk tolerance and performance - simplicity, in each).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, Design, RunTables, separation_problems
from backchannel.paradigms import AnalysisOptions
from backchannel.paradigms.council import Council
from backchannel.paradigms.council._report import build_report
from backchannel.paradigms.council._results import CouncilMetrics
from backchannel.report import Report

from .test_metrics import B1, _conversation


def _threshold_tables() -> RunTables:
    rows, events = [], []
    for cid, level in (("T5", 0.5), ("T9", 0.9)):
        row, evs = _conversation(cid, "B", *_B1_ARGS)
        cell = {"pool": "B", "threshold": level}
        rows.append({**row, "cell": json.dumps(cell), "threshold": level})
        events += evs
    return RunTables(
        pd.DataFrame(events),
        pd.DataFrame(columns=["run_id", "judge"]),
        pd.DataFrame(rows, columns=[*CONVERSATION_BASE_COLUMNS, "pool", "threshold"]),
        {"factors": ["pool", "threshold"], "config_resolved": {"settings": {"threshold": 0.7}}},
    )


_B1_ARGS = (
    ["abc", "bac", "abc", "cab", "abc", "bca", "cba"],
    [0.9, 0.8, 0.6, 0.7, 0.9, 0.5, 1.0],
)


@pytest.fixture(scope="module")
def result() -> CouncilMetrics:
    metrics = Council().metrics(_threshold_tables(), AnalysisOptions())
    assert isinstance(metrics, CouncilMetrics)
    return metrics


def test_each_level_of_the_threshold_is_its_own_group(result: CouncilMetrics) -> None:
    assert result.threshold is None  # each cell uses its own level
    rows = [(g.cell["threshold"], g.state) for g in result.groups]
    assert rows == [(0.5, "B"), (0.5, "C"), (0.9, "B"), (0.9, "C")]
    b = [g for g in result.groups if g.state == "B"]
    assert [g.voice_authenticity_rate for g in b] == [1.0, pytest.approx(3 / 7)]
    assert [g.tension.credible_tension_rate for g in b if g.tension] == [1.0, 0.0]
    assert [g.tension.counts["genuine_disagreement"] for g in b if g.tension] == [6, 0]
    assert [g.tension.counts["partial"] for g in b if g.tension] == [0, 6]
    assert [g.deliberations for g in result.groups] == [1, 1, 1, 1]
    assert list(result.groups[0].model_dump())[:5] == [
        "scenario",
        "delphi",
        "pool",
        "threshold",
        "state",
    ]


def test_nothing_is_averaged_over_a_factor_unnamed(result: CouncilMetrics) -> None:
    assert separation_problems(result, Design.of(_threshold_tables())) == []
    # B vs C within each level; the tests compare states, the pool levels, and say so
    assert {t.cell["threshold"] for t in result.tests} == {0.5, 0.9}
    assert result.pooled == {"tests": ["pool"]}


def test_a_threshold_option_overrides_every_cell() -> None:
    fixed = Council().metrics(_threshold_tables(), AnalysisOptions(threshold=0.7))
    assert isinstance(fixed, CouncilMetrics) and fixed.threshold == 0.7
    # .9 .8 .7 .9 1.0 are at or above 0.7 in both cells, still reported per level
    b = [g for g in fixed.groups if g.state == "B"]
    assert [(g.cell["threshold"], g.voice_authenticity_rate) for g in b] == [
        (0.5, pytest.approx(5 / 7)),
        (0.9, pytest.approx(5 / 7)),
    ]


def test_report_tables_keep_the_levels_apart(tmp_path: Path, result: CouncilMetrics) -> None:
    tables = _threshold_tables()
    report = Report("council")
    build_report(tables, result, report)
    html = report.write(tmp_path).read_text()
    assert "The run also varies threshold" in html
    assert "the threshold of the group" in html
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert list(summary.columns[:4]) == ["scenario", "delphi", "threshold", "state"]
    assert list(summary["voice_authenticity_rate"].round(4)) == [1.0, 1.0, 0.4286, 0.4286]
    tension = pd.read_csv(tmp_path / "tension.csv")
    assert list(zip(tension["threshold"], tension["partial"], strict=True)) == [(0.5, 0), (0.9, 6)]


def test_the_hand_built_deliberation_is_b1() -> None:
    assert _conversation("T5", "B", *_B1_ARGS)[1] == [{**e, "conversation_id": "T5"} for e in B1[1]]
