"""The dyad report on a random full-factorial run: every section, figure and table is written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from backchannel.paradigms.dyad import dyad_metrics
from backchannel.paradigms.dyad._report import fill_report
from backchannel.report import Report

from ._build import random_run, tables


def test_report_has_trajectories_shifts_and_tests(tmp_path: Path) -> None:
    run = tables(random_run())
    metrics = dyad_metrics(run)
    report = Report("dyad")
    fill_report(run, metrics, report)
    path = report.write(tmp_path)
    html = path.read_text()
    for heading in ("Trajectories", "Shifts and gaps", "Tests"):
        assert heading in html
    assert html.count("<figure>") == 3  # one trajectory figure per pairing and the shift bars
    assert set(report.table_names) >= {
        "trajectories",
        "shifts",
        "wald_tests",
        "pairing_comparisons",
    }
    trajectories = pd.read_csv(tmp_path / "trajectories.csv")
    # 2 pairings x 2 roles x checkpoints 0..4
    assert len(trajectories) == 2 * 2 * 5
    assert trajectories["conversations"].max() == 24
    wald = pd.read_csv(tmp_path / "wald_tests.csv")
    assert wald["skipped"].isna().all()  # 48 conversations support both models
    assert wald["p"].between(0, 1).all()


def test_report_notes_unreadable_categories_and_unknown_states(tmp_path: Path) -> None:
    from .test_metrics import hand_run

    run = tables(hand_run())
    report = Report("dyad")
    fill_report(run, dyad_metrics(run), report)
    html = report.write(tmp_path).read_text()
    # conversation C: one unreadable category, 4 role-rounds without a state
    assert "1 turn messages had no readable category" in html
    assert "4 role-rounds without a state" in html
