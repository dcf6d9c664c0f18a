"""On `sim/population` with the off-the-record probe, the divergence measures recover the
council's planted hidden change (docs/population.md, "Council")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, clustered_proportion_ci, divergence
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions

HIDDEN = 0.3


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder: Path = tmp_path_factory.mktemp("council-divergence")
    experiment = {
        "name": "planted-council-divergence",
        "paradigm": "council",
        "seed": 12,
        "replicates": 40,
        "settings": {
            "scenarios": ["housing"],
            "single_model": "sim/population",
            "verify": False,
            "off_the_record": True,
        },
        "population": {"council": {"hidden_change": HIDDEN}},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = bc.run(path, folder / "run")
    assert result.counts["failed"] == 0 and result.counts["incomplete"] == 0
    return result


def test_planted_hidden_change_falls_in_the_clustered_interval(run: Any) -> None:
    pairs = get_paradigm("council").stance_pairs(run.tables, AnalysisOptions())
    assert len(pairs) == 40 * 3 * 3 and pairs["skipped"].isna().all()
    hidden = pairs["private_moved"].astype(bool) & ~pairs["public_moved"].astype(bool)
    interval = clustered_proportion_ci(hidden.to_numpy(), pairs["conversation_id"])
    assert interval.low <= HIDDEN <= interval.high, interval
    # The advocate's public stance is its assigned option: it never moves.
    assert not pairs["public_moved"].astype(bool).any()
    assert (pairs["agree"].astype(bool) == ~hidden).all()


def test_the_kit_reports_each_debate_round(run: Any) -> None:
    tables = run.tables
    pairs = get_paradigm("council").stance_pairs(tables, AnalysisOptions())
    result = divergence(pairs, Design.of(tables), tables.done_conversations())
    assert [(row.round, row.role, row.n) for row in result.by_cell] == [
        (r, "advocate", 120) for r in (1, 2, 3)
    ]
    for row in result.by_cell:
        assert row.public_accommodation.estimate == 0.0
