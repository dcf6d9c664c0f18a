"""Every paradigm declares its headline contrasts from the design's levels, and a stored run's
contrast agrees with the paradigm's own metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import backchannel as bc
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import read_contrast


@pytest.mark.parametrize(
    ("paradigm", "levels", "names"),
    [
        ("peer_pressure", {"k": [0, 1, 3]}, ["fpi_gap"]),
        ("peer_pressure", {"k": [1, 3]}, []),
        ("testimony", {"condition": ["C0", "C1"]}, ["truth_gap", "true_share_gap"]),
        ("testimony", {"intervention": ["none", "warning"]}, []),
        (
            "dyad",
            {
                "discussant_model": ["a", "b"],
                "opponent_model": ["a", "b"],
                "style": ["manipulative", "plain"],
            },
            ["opponent_effect", "discussant_effect", "style_effect"],
        ),
        ("dyad", {"stance": ["human", "neutral"]}, []),
        ("council", {"pool": ["A", "B"]}, ["fcc_gap"]),
        ("council", {}, []),
        ("discussion", {"model": ["sim"]}, []),
    ],
)
def test_contrasts_follow_the_designs_levels(
    paradigm: str, levels: dict[str, list[object]], names: list[str]
) -> None:
    found = get_paradigm(paradigm).contrasts(levels)
    assert [c.name for c in found] == names
    for contrast in found:
        assert contrast.unit == "conversation" and contrast.outcome


def _peer_pressure_run(tmp_path: Path) -> bc.Run:
    experiment = {
        "name": "pp-contrast",
        "paradigm": "peer_pressure",
        "seed": 5,
        "replicates": 2,
        "factors": {"k": [0, 1], "n_agents": [3, 4]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 4}],
            "rounds": 2,
            "reask": {"checkpoints": [], "items": 0},
            "judge": {"kind": "llm", "model": "sim/population"},
        },
        "population": {"peer_pressure": {"adopt": 0.4}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return bc.run(path, tmp_path / "run")


def test_fpi_gap_is_the_difference_of_the_metrics_fpi(tmp_path: Path) -> None:
    run = _peer_pressure_run(tmp_path)
    paradigm = get_paradigm("peer_pressure")
    (contrast,) = paradigm.contrasts({"k": [0, 1]})
    reading = read_contrast(contrast, run.tables, AnalysisOptions())
    fpi = {(r.cell["n_agents"], r.cell["k"]): r for r in run.metrics().fpi.by_cell}
    assert [row.stratum for row in reading.rows] == [{"n_agents": 3}, {"n_agents": 4}]
    for row in reading.rows:
        n = row.stratum["n_agents"]
        one, none = fpi[(n, 1)], fpi[(n, 0)]
        assert row.estimate == pytest.approx(one.fpi - none.fpi)
        assert (row.first.n, row.second.n) == (one.fpi_n, none.fpi_n) == (8, 8)
        assert row.first.trials == n - 1 and row.second.trials == n  # honest agents probed
        assert row.halfwidth is not None and row.halfwidth > 0
    assert reading.halfwidth == max(row.halfwidth or 0 for row in reading.rows)
