"""The plan on `sim/population` with planted rates, on every paradigm's headline contrasts: the
half-width and power it predicts from a run of the planted population read as its pilot match
what independent runs of the planned size drawn from that population's conversations achieve
through the contrast's own intervals (`planning.simulate`, another seed): within 15 % and 5
points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import (
    Target,
    contrast_units,
    estimate_contrast,
    pilot_assumption,
    plan_row,
    simulate,
)

RUNS = 1000
POWER = 0.8

PEER_PRESSURE = {
    "paradigm": "peer_pressure",
    "replicates": 8,
    "factors": {"k": [0, 1]},
    "settings": {
        "model": "sim/population",
        "datasets": [{"name": "counterfact", "limit": 8}],
        "n_agents": 4,
        "rounds": 2,
        "reask": {"checkpoints": [], "items": 0},
        "judge": {"kind": "llm", "model": "sim/population"},
    },
    "population": {"peer_pressure": {"adopt": 0.1, "know": 0.8}},
}
TESTIMONY = {
    "paradigm": "testimony",
    "factors": {"model": ["sim/population#wary"], "condition": ["C0", "C1"]},
    "settings": {"deceptions": ["event"], "intervention": "none"},
    "population": {"testimony": {"observation": 1.5, "trust": 0.4, "strategy": "reconstruct"}},
}
DYAD = {
    "paradigm": "dyad",
    "replicates": 6,
    "factors": {
        "discussant_model": ["sim/population#a", "sim/population#b"],
        "opponent_model": ["sim/population#a", "sim/population#b"],
        "style": ["manipulative", "plain"],
    },
    "settings": {"rounds": 3},
    "population": {
        "dyad": {"discussant_rate": 0.1, "start_spread": 1.0},
        "models": {"b": {"dyad": {"discussant_rate": 0.3, "opponent_rate": 0.2}}},
    },
}
COUNCIL = {
    "paradigm": "council",
    "replicates": 30,
    "factors": {"pool": ["A", "B"]},
    "settings": {
        "scenarios": ["housing"],
        "single_model": "sim/population#a",
        "pool_models": ["sim/population#a", "sim/population#b", "sim/population#c"],
        "verifier_model": "sim/population#a",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "experiment",
    [PEER_PRESSURE, TESTIMONY, DYAD, COUNCIL],
    ids=["peer_pressure", "testimony", "dyad", "council"],
)
def test_every_headline_contrast_is_planned_as_it_is_achieved(
    tmp_path: Path, experiment: dict[str, Any]
) -> None:
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({"name": "population", "seed": 7, **experiment}))
    run = bc.run(path, tmp_path / "run")
    paradigm = get_paradigm(experiment["paradigm"])
    contrasts = paradigm.contrasts(experiment["factors"])
    assert contrasts
    checked = 0
    for contrast in contrasts:
        units = contrast_units(contrast, run.tables, AnalysisOptions())
        for row in estimate_contrast(contrast, units).rows:
            assumption = pilot_assumption(contrast, row)
            if assumption.spread == 0:
                continue  # a stratum the population never varies: any size pins it
            if abs(assumption.difference) > 0.25 * assumption.spread:
                target = Target(power=POWER)
            else:  # no effect worth sizing for: a half-width of a third of the sd
                target = Target(halfwidth=assumption.spread / 3)
            planned = plan_row(contrast, row.stratum, assumption, target, (1, 1), pilot=units)
            assert planned.method == "simulated" and planned.closed_units is not None
            found = simulate(contrast, units, row.stratum, planned.units, runs=RUNS, seed=99)
            where = f"{contrast.name} {row.stratum} n={planned.units}"
            assert found.halfwidth is not None and found.power is not None, where
            assert found.halfwidth == pytest.approx(planned.halfwidth, rel=0.15), where
            if planned.power is not None:
                assert abs(found.power - planned.power) <= 0.05, where
            checked += 1
    assert checked
