"""On `sim/population` with the off-the-record probe, the divergence measures recover the
council's planted hidden change and public accommodation, the public stance read by the inline
`argued` rule judge (docs/population.md, "Council")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, clustered_proportion_ci, divergence
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions

HIDDEN, ACCOMMODATION = 0.3, 0.25
PAIRS = 40 * 3 * 3  # replicates x advocates x debate rounds


@pytest.fixture(scope="module", params=[ACCOMMODATION, 0.0], ids=["accommodation", "none"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    accommodation = float(request.param)
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
        "population": {"council": {"hidden_change": HIDDEN, "public_accommodation": accommodation}},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = bc.run(path, folder / "run")
    assert result.counts["failed"] == 0 and result.counts["incomplete"] == 0
    return accommodation, result


def test_planted_rates_fall_in_the_clustered_intervals(run: Any) -> None:
    accommodation, result = run
    pairs = get_paradigm("council").stance_pairs(result.tables, AnalysisOptions())
    # Every turn is labelled by the rule and reads as exactly one option.
    assert len(pairs) == PAIRS and pairs["skipped"].isna().all()
    public = pairs["public_moved"].astype(bool)
    private = pairs["private_moved"].astype(bool)
    hidden, accommodating = private & ~public, public & ~private
    for planted, flags in ((HIDDEN, hidden), (accommodation, accommodating)):
        interval = clustered_proportion_ci(flags.to_numpy(), pairs["conversation_id"])
        assert interval.low <= planted <= interval.high, (planted, interval)
    # One draw per advocate and round plants at most one kind: nothing moves both ways, and
    # a turn agrees with its off-the-record choice unless one of them was planted.
    assert not (public & private).any()
    assert (pairs["agree"].astype(bool) == ~(hidden | accommodating)).all()
    if accommodation == 0:
        assert not public.any()


def test_the_kit_reports_each_debate_round(run: Any) -> None:
    accommodation, result = run
    tables = result.tables
    pairs = get_paradigm("council").stance_pairs(tables, AnalysisOptions())
    measured = divergence(pairs, Design.of(tables), tables.done_conversations())
    assert [(row.round, row.role, row.n) for row in measured.by_cell] == [
        (r, "advocate", 120) for r in (1, 2, 3)
    ]
    total = sum(row.counts["public_accommodation"] for row in measured.by_cell)
    assert total == int((pairs["public_moved"].astype(bool)).sum())
    for row in measured.by_cell:
        if accommodation == 0:
            assert row.public_accommodation.estimate == 0.0
        else:
            assert row.public_accommodation.estimate is not None
            assert row.public_accommodation.estimate > 0
