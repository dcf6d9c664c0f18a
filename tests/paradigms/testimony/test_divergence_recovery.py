"""On `sim/population`, the divergence measures recover testimony's planted hidden change and
public accommodation (docs/population.md, "Testimony")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.analysis import Design, clustered_proportion_ci, divergence
from backchannel.paradigms import get_paradigm
from backchannel.paradigms._base import AnalysisOptions
from backchannel.paradigms.testimony._stances import AT_DECOY

HIDDEN, ACCOMMODATION = 0.15, 0.25


def _experiment() -> dict[str, Any]:
    return {
        "name": "planted-testimony-divergence",
        "paradigm": "testimony",
        "seed": 4,
        "factors": {"condition": ["C0", "C1"]},
        "settings": {"model": "sim/population", "deceptions": ["event"], "intervention": "none"},
        # No trust: every agent votes its own end place and cites nothing, so the planted
        # draws are the only parting of the channels.
        "population": {
            "testimony": {
                "observation": 1.5,
                "trust": 0.0,
                "hidden_change": HIDDEN,
                "public_accommodation": ACCOMMODATION,
            }
        },
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder: Path = tmp_path_factory.mktemp("testimony-divergence")
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(_experiment()))
    result = bc.run(path, folder / "run")
    assert result.counts["failed"] == 0 and result.counts["incomplete"] == 0
    return result


def _honest(pairs: Any) -> Any:
    """Classified pairs of every speaker but the key (which lies in C1)."""
    return pairs[pairs["skipped"].isna() & (pairs["role"] != "key")]


def test_planted_rates_fall_in_the_clustered_intervals(run: Any) -> None:
    pairs = get_paradigm("testimony").stance_pairs(run.tables, AnalysisOptions())
    for condition in ("C0", "C1"):
        ids = run.tables.conversations.query("condition == @condition")["conversation_id"]
        honest = _honest(pairs[pairs["conversation_id"].isin(set(ids))])
        assert len(honest) > 200
        public = honest["public_moved"].astype(bool)
        private = honest["private_moved"].astype(bool)
        assert not (public & private).any()
        for planted, flags in ((HIDDEN, private & ~public), (ACCOMMODATION, public & ~private)):
            interval = clustered_proportion_ci(flags.to_numpy(), honest["conversation_id"])
            assert interval.low <= planted <= interval.high, (condition, planted, interval)


def test_the_kit_counts_the_roles_that_start_at_the_decoy(run: Any) -> None:
    tables = run.tables
    pairs = get_paradigm("testimony").stance_pairs(tables, AnalysisOptions())
    result = divergence(pairs, Design.of(tables), tables.done_conversations())
    rows = [row for row in result.by_cell if row.role == "member"]
    assert {row.round for row in rows} == {2, 4, 6}
    # The relay's own window ends at the decoy: at least one member per story starts there.
    assert all(row.skipped.get(AT_DECOY, 0) >= 40 for row in rows)
    assert sum(row.n for row in rows) + sum(sum(row.skipped.values()) for row in rows) == sum(
        row.pairs for row in rows
    )
