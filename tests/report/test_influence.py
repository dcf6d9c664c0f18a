"""The report's Friedkin-Johnsen section: one table row per fitted cell, model and channel,
with the numbers of the fit, and a figure only when something was fitted."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from backchannel.analysis import OPINION_COLUMNS, fit_influence
from backchannel.report import Report, influence_frame, influence_section

NAN = math.nan


def _frame() -> pd.DataFrame:
    # The hand-worked trajectories of tests/analysis/test_influence.py: a = 0.5, s = 0,
    # error reduction 0.5 on both channels.
    rows = []
    for cid, agent, xs, ms in (
        ("c1", "A", [0, 1, 1], [NAN, 1, 0]),
        ("c2", "B", [1, 1, 0], [NAN, 0, 0]),
    ):
        rows += [
            (cid, agent, "m", t, x, x, m, m) for t, (x, m) in enumerate(zip(xs, ms, strict=True))
        ]
    return pd.DataFrame(rows, columns=list(OPINION_COLUMNS))


def test_the_table_holds_one_row_per_model_and_channel(tmp_path: Path) -> None:
    influence = fit_influence(_frame(), {"c1": {"k": 1}, "c2": {"k": 1}}, ("k",), resamples=50)
    table = influence_frame(influence)
    assert list(table["channel"]) == ["private", "public"]
    assert list(table.columns[:3]) == ["k", "model", "channel"]
    assert table["susceptibility"].tolist() == pytest.approx([0.5, 0.5])
    assert table["error_reduction"].tolist() == pytest.approx([0.5, 0.5])
    report = Report("run", "sub")
    influence_section(report, influence)
    path = report.write(tmp_path / "out")
    html = path.read_text(encoding="utf-8")
    assert "Influence (Friedkin-Johnsen)" in html and "<svg" in html
    written = pd.read_csv(path.parent / "influence.csv")
    assert written["susceptibility"].tolist() == pytest.approx([0.5, 0.5])
    errors = pd.read_csv(path.parent / "influence_error.csv")
    assert errors["error_reduction"].tolist() == pytest.approx([0.5, 0.5])
    assert errors["rmse"].tolist() == pytest.approx([0.5, 0.5])


def test_a_fit_with_nothing_fitted_shows_its_reasons_without_a_figure(tmp_path: Path) -> None:
    one = _frame()[lambda f: f["conversation_id"] == "c1"]
    influence = fit_influence(one, {}, (), resamples=10)
    report = Report("run")
    influence_section(report, influence)
    html = report.write(tmp_path / "out").read_text(encoding="utf-8")
    assert "fewer than 2 conversations" in html and "<svg" not in html
