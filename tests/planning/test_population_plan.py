"""The plan on `sim/population` with planted rates: the half-width and power it predicts for
peer pressure's `fpi_gap` from a run of the planted population are those runs of the planned
size drawn from that population (its conversations resampled n per arm) achieve through
`read_contrast`'s statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import backchannel as bc
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import (
    Units,
    contrast_units,
    estimate_contrast,
    pilot_assumption,
    predicted_halfwidth,
    predicted_power,
    read_contrast,
    units_for_power,
)

REPS = 300


def _run(tmp_path: Path, name: str, seed: int, replicates: int) -> bc.Run:
    experiment = {
        "name": name,
        "paradigm": "peer_pressure",
        "seed": seed,
        "replicates": replicates,
        "factors": {"k": [0, 1]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 10}],
            "n_agents": 4,
            "rounds": 2,
            "reask": {"checkpoints": [], "items": 0},
            "judge": {"kind": "llm", "model": "sim/population"},
        },
        "population": {"peer_pressure": {"adopt": 0.15, "know": 0.8}},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return bc.run(path, tmp_path / name)


@pytest.mark.slow
def test_fpi_gap_plan_matches_the_population(tmp_path: Path) -> None:
    (contrast,) = get_paradigm("peer_pressure").contrasts({"k": [0, 1]})
    options = AnalysisOptions()
    tables = _run(tmp_path, "population", 2, 20).tables
    pilot = read_contrast(contrast, tables, options)
    assumption = pilot_assumption(contrast, pilot.rows[0])
    n = units_for_power(assumption, 0.75)
    predicted = (predicted_halfwidth(assumption, n), predicted_power(assumption, n))
    pool = contrast_units(contrast, tables, options).frame
    arms = {arm: rows.reset_index(drop=True) for arm, rows in pool.groupby("arm")}
    assert all(len(rows) >= 4 * n for rows in arms.values())
    rng = np.random.default_rng(0)
    widths, rejections = [], 0
    for _ in range(REPS):
        sample = [rows.iloc[rng.choice(len(rows), n, replace=True)] for rows in arms.values()]
        (row,) = estimate_contrast(contrast, Units(pd.concat(sample), ())).rows
        assert row.low is not None and row.high is not None and row.halfwidth is not None
        widths.append(row.halfwidth)
        rejections += row.low > 0
    assert np.mean(widths) == pytest.approx(predicted[0], rel=0.15)
    assert abs(rejections / REPS - predicted[1]) <= 0.05
