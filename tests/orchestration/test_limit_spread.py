"""`--limit N` takes conversations round robin over cells."""

from __future__ import annotations

from pathlib import Path

from backchannel.experiment import load_experiment
from backchannel.orchestration import plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_limit_covers_every_cell_first() -> None:
    loaded = load_experiment(EXAMPLES / "quickstart.yaml", model_override="sim")
    specs = plan(loaded, limit=3).specs
    assert sorted(s.cell["k"] for s in specs) == [0, 0, 1]
    council = load_experiment(EXAMPLES / "council_housing.yaml", model_override="sim")
    assert {s.cell["pool"] for s in plan(council, limit=2).specs} == {"A", "B"}
    dyad = load_experiment(EXAMPLES / "dyad.yaml", model_override="sim")
    chosen = plan(dyad, limit=48).specs
    assert len({s.cell_key for s in chosen}) == 48
    everything = plan(dyad).specs
    assert [s for s in everything if s in chosen] == chosen  # design order kept
