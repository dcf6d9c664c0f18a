"""On `sim/population`, the divergence measures recover the dyad's planted hidden change and
public accommodation (docs/population.md, "Dyad")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, clustered_proportion_ci, divergence
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms._stance_rows import FLAGS

HIDDEN, ACCOMMODATION = 0.2, 0.3


def _experiment() -> dict[str, Any]:
    return {
        "name": "planted-dyad-divergence",
        "paradigm": "dyad",
        "seed": 8,
        "replicates": 60,
        "factors": {"stance": ["human", "natural"]},
        "settings": {
            "discussant_model": "sim/population",
            "opponent_model": "sim/population",
            "style": "plain",
            "wording": "first",
            "rounds": 3,
        },
        "population": {
            "dyad": {
                # No movement but the planted traits: positions stay unless a trait moves them.
                "discussant_rate": 0.0,
                "opponent_rate": 0.0,
                "discussant_start": 3.0,
                "stance_strength": 2.0,
                "start_spread": 0.0,
                "hidden_change": HIDDEN,
                "public_accommodation": ACCOMMODATION,
            }
        },
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder: Path = tmp_path_factory.mktemp("dyad-divergence")
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(_experiment()))
    result = bc.run(path, folder / "run")
    assert result.counts["failed"] == 0
    return result


def test_planted_rates_fall_in_the_clustered_intervals(run: Any) -> None:
    tables = run.tables
    pairs = get_paradigm("dyad").stance_pairs(tables, AnalysisOptions())
    classified = pairs[pairs["skipped"].isna()]
    # The Discussant's round-1 reply answers no argument yet, so no trait acts on it.
    replies = classified[(classified["role"] == "opponent") | (classified["round"] >= 2)]
    assert len(replies) == 2 * 60 * (3 + 2)
    public = replies["public_moved"].astype(bool)
    private = replies["private_moved"].astype(bool)
    for planted, flags in ((HIDDEN, private & ~public), (ACCOMMODATION, public & ~private)):
        interval = clustered_proportion_ci(flags.to_numpy(), replies["conversation_id"])
        assert interval.low <= planted <= interval.high, (planted, interval)
    # Without a trait nothing moves: the two kinds of divergence are all there is.
    assert not (public & private).any()
    first = classified[(classified["role"] == "discussant") & (classified["round"] == 1)]
    assert not first[list(FLAGS[:2])].astype(bool).any().any()


def test_the_kit_reports_every_cell_round_and_role(run: Any) -> None:
    tables = run.tables
    pairs = get_paradigm("dyad").stance_pairs(tables, AnalysisOptions())
    result = divergence(pairs, Design.of(tables), tables.done_conversations())
    rows = {(row.cell["stance"], row.round, row.role): row for row in result.by_cell}
    assert len(rows) == 2 * 4 * 2 - 2  # the opponent has no round-0 turn
    final = rows[("human", 3, "discussant")]
    assert final.n == 60 and final.skipped == {}
    assert rows[("human", 0, "discussant")].skipped == {
        "opening: answers no argument, so it has no tag": 60
    }
