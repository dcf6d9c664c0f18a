"""`backchannel plan` end to end on `sim/population`: a pilot run sizes peer pressure's
`fpi_gap` and testimony's `truth_gap` for a target power, then many independent runs of the
planned size are made and read like any run, and their mean interval half-width and the share
whose interval excludes zero are set beside what the plan predicted.

The independent runs are the disjoint slices of one large run with another seed (its
conversations are independent draws of the planted population, so a slice of n per arm, or
n pairs, is a run of the planned size). Ratios and shares only: no timing.

    python bench/planning.py            # pilots of 6 replicates per item, 50 runs each
    python bench/planning.py --quick    # 10 items, a small pilot and 10 runs (the smoke test)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from backchannel import Run, run
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import (
    Target,
    Units,
    contrast_units,
    estimate_contrast,
    pilot_assumption,
    plan_row,
)

POWER = 0.8

DESIGNS: dict[str, tuple[str, dict[str, Any], int]] = {
    # name: (contrast, experiment without seed and replicates, items per cell)
    "peer_pressure": (
        "fpi_gap",
        {
            "paradigm": "peer_pressure",
            "factors": {"k": [0, 1]},
            "settings": {
                "model": "sim/population",
                "datasets": [{"name": "counterfact", "limit": 20}],
                "n_agents": 4,
                "rounds": 2,
                "reask": {"checkpoints": [], "items": 0},
                "judge": {"kind": "llm", "model": "sim/population"},
            },
            "population": {"peer_pressure": {"adopt": 0.1, "know": 0.8}},
        },
        20,
    ),
    "testimony": (
        "truth_gap",
        {
            "paradigm": "testimony",
            "factors": {"model": ["sim/population#wary"], "condition": ["C0", "C1"]},
            "settings": {"deceptions": ["event"], "intervention": "none"},
            "population": {
                "testimony": {"observation": 1.5, "trust": 0.4, "strategy": "reconstruct"}
            },
        },
        40,
    ),
}


@dataclass(frozen=True)
class Check:
    """One contrast: the plan's size and predictions, and what the runs of that size achieved."""

    paradigm: str
    contrast: str
    method: str
    units: int
    closed_units: int | None
    predicted_halfwidth: float
    achieved_halfwidth: float
    predicted_power: float
    achieved_power: float
    runs: int

    @property
    def halfwidth_ratio(self) -> float:
        return self.achieved_halfwidth / self.predicted_halfwidth


def _run(directory: Path, name: str, experiment: dict[str, Any], seed: int, replicates: int) -> Run:
    path = directory / f"{name}.yaml"
    data = {"name": name, "seed": seed, "replicates": replicates, **experiment}
    path.write_text(yaml.safe_dump(data))
    return run(path, directory / name)


def _slices(contrast: Any, units: Units, n: int) -> list[Units]:
    """Disjoint runs of n units per arm (n pairs) from the large run's conversations."""
    frame = units.frame[units.frame["value"].notna()]
    if contrast.paired:
        keys = list(contrast.pair_by)
        pairs = frame.groupby(keys).filter(lambda g: set(g["arm"]) == {"first", "second"})
        groups = [g for _, g in pairs.groupby(keys, sort=True)]
        count = len(groups) // n
        return [Units(pd.concat(groups[i * n : (i + 1) * n]), ()) for i in range(count)]
    arms = [frame[frame["arm"] == arm] for arm in ("first", "second")]
    count = min(len(a) for a in arms) // n
    return [Units(pd.concat([a.iloc[i * n : (i + 1) * n] for a in arms]), ()) for i in range(count)]


def check(
    name: str, directory: Path, pilot_replicates: int, runs: int, items_limit: int | None
) -> Check:
    contrast_name, experiment, items = DESIGNS[name]
    if items_limit is not None:
        experiment, items = {**experiment, "items_limit": items_limit}, min(items, items_limit)
    paradigm = get_paradigm(experiment["paradigm"])
    (contrast,) = [c for c in paradigm.contrasts(experiment["factors"]) if c.name == contrast_name]
    options = AnalysisOptions()
    pilot = _run(directory, f"{name}-pilot", experiment, 1, pilot_replicates)
    units = contrast_units(contrast, pilot.tables, options)
    (row,) = estimate_contrast(contrast, units).rows
    assumption = pilot_assumption(contrast, row)
    planned = plan_row(contrast, row.stratum, assumption, Target(power=POWER), (1, 1), pilot=units)
    replicates = -(-runs * planned.units // items)
    large = _run(directory, f"{name}-runs", experiment, 2, replicates)
    slices = _slices(contrast, contrast_units(contrast, large.tables, options), planned.units)
    widths, rejected = [], 0
    for part in slices:
        (found,) = estimate_contrast(contrast, part).rows
        assert found.low is not None and found.high is not None and found.halfwidth is not None
        widths.append(found.halfwidth)
        rejected += found.low > 0 or found.high < 0
    return Check(
        paradigm=name,
        contrast=contrast.name,
        method=planned.method,
        units=planned.units,
        closed_units=planned.closed_units,
        predicted_halfwidth=planned.halfwidth,
        achieved_halfwidth=float(np.mean(widths)),
        predicted_power=planned.power or float("nan"),
        achieved_power=rejected / len(slices),
        runs=len(slices),
    )


def main(argv: list[str] | None = None) -> list[Check]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small pilot and 10 runs")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    pilot, runs, limit = (3, 10, 10) if args.quick else (6, 50, None)
    with tempfile.TemporaryDirectory() as folder:
        checks = [check(name, Path(folder), pilot, runs, limit) for name in DESIGNS]
    if args.json:
        print(json.dumps([{**c.__dict__, "halfwidth_ratio": c.halfwidth_ratio} for c in checks]))
        return checks
    print(
        "paradigm       contrast   method     n/arm (closed)  half-width achieved/predicted  "
        "power predicted  achieved  runs"
    )
    for c in checks:
        print(
            f"{c.paradigm:<14} {c.contrast:<10} {c.method:<10} {c.units:>5} ({c.closed_units})"
            f"{'':<8}{c.halfwidth_ratio:>8.3f}{'':<22}{c.predicted_power:>6.3f}"
            f"{c.achieved_power:>10.3f}{c.runs:>6}"
        )
    return checks


if __name__ == "__main__":
    main(sys.argv[1:])
