"""`backchannel plan` checked against independent runs on `sim/population`: each headline
contrast is sized for power 0.8 (a) from rates stated on the command line (closed forms, the
`--assume` values the planted population implies) and (b) from many separate pilots of several
sizes (simulated sizing), then hundreds of independent runs of each planned size are read with
`estimate_contrast`, and their mean half-width and share of intervals excluding zero are set
beside the predictions.

The independent runs are disjoint slices of one large run with its own seed: its conversations
(story pairs, for testimony) are shuffled with a fixed seed and cut into runs of n per arm (n
pairs), so each slice is a random sample of the planted population's conversations, not of one
item. The pilots are disjoint replicate blocks of another large run with another seed. With
about 400 runs the achieved power's own standard error is about 2 points. Shares only: no
timing; the CPU time of each paradigm is printed.

    python bench/planning.py                          # peer pressure and testimony
    python bench/planning.py --paradigm testimony     # one of them
    python bench/planning.py --quick                  # a small smoke run
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from backchannel import Run, run
from backchannel.paradigms import AnalysisOptions, get_paradigm
from backchannel.planning import (
    Contrast,
    Target,
    Units,
    contrast_units,
    estimate_contrast,
    pilot_assumption,
    plan_row,
    proportion_sd,
    stated_assumption,
)

POWER = 0.8
ADOPT, ROUNDS, AGENTS = 0.1, 2, 4


def _peer_pressure_rates(units: Units) -> dict[str, float]:
    """With `peer_weight: 0` and full memory, an honest agent of k = 1 believes the false
    answer with chance 1 - (1 - adopt)^T, independently of the others (ICC 0); k = 0 never."""
    return {
        "first": 1 - (1 - ADOPT) ** ROUNDS,
        "second": 0.0,
        "trials": AGENTS - 1,
        "icc": 0.0,
    }


def _testimony_rates(units: Units) -> dict[str, float]:
    """Testimony's truth majority has no formula in its parameters (it rests on each story's
    walks and the trust draws), so its population rates are read from the check runs pooled:
    every story pair, a share known to about half a point. They enter as `--assume` does:
    the arms' rates and their correlation over pairs."""
    frame = units.frame[units.frame["value"].notna()]
    pairs = _pair_values(frame)
    first, second = float(pairs[:, 0].mean()), float(pairs[:, 1].mean())
    p11 = float((pairs[:, 0] * pairs[:, 1]).mean())
    sd1, sd2 = proportion_sd(first), proportion_sd(second)
    correlation = (p11 - first * second) / (sd1 * sd2) if sd1 * sd2 > 0 else 0.0
    return {"first": first, "second": second, "correlation": correlation}


@dataclass(frozen=True)
class Design:
    """A paradigm's bench design: its contrast, experiment, items per cell, how its stated
    rates are found, the check run's replicates and the pilots' sizes (replicates per item)."""

    contrast: str
    experiment: dict[str, Any]
    items: int
    rates: Callable[[Units], dict[str, float]]
    replicates: int
    pilot_sizes: tuple[int, ...]
    rates_from: str


DESIGNS: dict[str, Design] = {
    "peer_pressure": Design(
        "fpi_gap",
        {
            "paradigm": "peer_pressure",
            "factors": {"k": [0, 1]},
            "settings": {
                "model": "sim/population",
                "datasets": [{"name": "counterfact", "limit": 20}],
                "n_agents": AGENTS,
                "rounds": ROUNDS,
                "reask": {"checkpoints": [], "items": 0},
                "judge": {"kind": "llm", "model": "sim/population"},
            },
            "population": {"peer_pressure": {"adopt": ADOPT, "know": 0.8, "peer_weight": 0}},
        },
        20,
        _peer_pressure_rates,
        250,
        (2, 5, 10),
        "planted: 1 - (1 - adopt)^T = 0.19 over 3 honest agents, ICC 0; k = 0: 0",
    ),
    "testimony": Design(
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
        _testimony_rates,
        130,
        (1, 2, 5),
        "the population's rates over all the check runs' story pairs",
    ),
}


@dataclass
class Result:
    """One contrast's predictions beside what the independent runs achieved."""

    paradigm: str
    contrast: str
    stated: dict[str, float]
    stated_units: int
    stated_halfwidth: float
    stated_power: float
    achieved_halfwidth: float
    achieved_power: float
    runs: int
    pilots: list[dict[str, Any]] = field(default_factory=list)
    cpu_seconds: float = 0.0


def _run(directory: Path, name: str, experiment: dict[str, Any], seed: int, replicates: int) -> Run:
    path = directory / f"{name}.yaml"
    data = {"name": name, "seed": seed, "replicates": replicates, **experiment}
    path.write_text(yaml.safe_dump(data))
    return run(path, directory / name)


def _pair_values(frame: pd.DataFrame) -> np.ndarray:
    """(first, second) per story pair with both, as rows."""
    keys = ["item_id", "replicate"]
    wide = frame.pivot_table(index=keys, columns="arm", values="value", aggfunc="first")
    wide = wide.dropna()
    return wide[["first", "second"]].to_numpy(dtype=float)


class Slices:
    """Independent runs of n units per arm (n pairs): the check run's conversations shuffled
    once with a fixed seed and cut into disjoint runs, each read with `estimate_contrast`."""

    def __init__(self, contrast: Contrast, units: Units, seed: int = 11) -> None:
        self.contrast = contrast
        frame = units.frame[units.frame["value"].notna()]
        rng = np.random.default_rng(seed)
        if contrast.paired:
            keys = list(contrast.pair_by)
            groups = [
                g for _, g in frame.groupby(keys, sort=True) if set(g["arm"]) == {"first", "second"}
            ]
            self.groups = [groups[i] for i in rng.permutation(len(groups))]
        else:
            self.arms = [
                frame[frame["arm"] == arm].iloc[rng.permutation(int((frame["arm"] == arm).sum()))]
                for arm in ("first", "second")
            ]
        self.cache: dict[int, tuple[float, float, int]] = {}

    def achieved(self, n: int) -> tuple[float, float, int]:
        """Mean half-width, share of intervals excluding zero, and runs, at n per arm."""
        if n not in self.cache:
            widths, rejected = [], 0
            for part in self._cut(n):
                (found,) = estimate_contrast(self.contrast, part).rows
                assert found.low is not None and found.high is not None
                widths.append((found.high - found.low) / 2)
                rejected += found.low > 0 or found.high < 0
            self.cache[n] = (float(np.mean(widths)), rejected / len(widths), len(widths))
        return self.cache[n]

    def _cut(self, n: int) -> list[Units]:
        if self.contrast.paired:
            count = len(self.groups) // n
            return [Units(pd.concat(self.groups[i * n : (i + 1) * n]), ()) for i in range(count)]
        count = min(len(a) for a in self.arms) // n
        return [
            Units(pd.concat([a.iloc[i * n : (i + 1) * n] for a in self.arms]), ())
            for i in range(count)
        ]


def _pilots(units: Units, sizes: tuple[int, ...], count: int) -> list[tuple[int, Units]]:
    """`count` disjoint pilots of each size (replicates per item): blocks of the pilot run's
    replicates."""
    found, start = [], 0
    replicate = units.frame["replicate"].astype(int)
    for size in sizes:
        for _ in range(count):
            keep = (replicate >= start) & (replicate < start + size)
            found.append((size, Units(units.frame[keep.to_numpy()], ())))
            start += size
    return found


def check(
    name: str,
    directory: Path,
    pilots: int,
    scale: float,
    items: int | None,
    sizes: tuple[int, ...],
) -> Result:
    design = DESIGNS[name]
    started = time.process_time()
    experiment, replicates = dict(design.experiment), max(2, round(design.replicates * scale))
    if items is not None:
        experiment["items_limit"] = items
    paradigm = get_paradigm(experiment["paradigm"])
    contrasts = paradigm.contrasts(experiment["factors"])
    (contrast,) = [c for c in contrasts if c.name == design.contrast]
    options = AnalysisOptions()
    large = _run(directory, f"{name}-check", experiment, 2, replicates)
    slices = Slices(contrast, contrast_units(contrast, large.tables, options))
    # (a) Stated rates: the closed forms, as `plan --assume` sizes the design.
    stated = design.rates(contrast_units(contrast, large.tables, options))
    assumption = stated_assumption(contrast, stated)
    planned = plan_row(contrast, {}, assumption, Target(power=POWER), (1, 1))
    assert planned.power is not None
    width, power, runs = slices.achieved(planned.units)
    result = Result(
        paradigm=name,
        contrast=contrast.name,
        stated=stated,
        stated_units=planned.units,
        stated_halfwidth=planned.halfwidth,
        stated_power=planned.power,
        achieved_halfwidth=width,
        achieved_power=power,
        runs=runs,
    )
    # (b) Pilots of several sizes: simulated sizing from each pilot's own conversations.
    total = pilots * sum(sizes)
    pilot_run = _run(directory, f"{name}-pilots", experiment, 3, total)
    pilot_units = contrast_units(contrast, pilot_run.tables, options)
    for size, units in _pilots(pilot_units, sizes, pilots):
        rows = estimate_contrast(contrast, units).rows
        entry: dict[str, Any] = {"replicates": size, "units": int(len(units.frame) // 2)}
        try:
            (row,) = rows
            own = pilot_assumption(contrast, row)
            sized = plan_row(contrast, {}, own, Target(power=POWER), (1, 1), pilot=units)
        except ValueError as error:  # a pilot with no difference or no spread: recorded
            entry["failed"] = str(error)
            result.pilots.append(entry)
            continue
        width, power, runs = slices.achieved(sized.units)
        entry.update(
            n=sized.units,
            closed=sized.closed_units,
            predicted_halfwidth=sized.halfwidth,
            predicted_power=sized.power,
            achieved_halfwidth=width,
            achieved_power=power,
            runs=runs,
        )
        result.pilots.append(entry)
    result.cpu_seconds = time.process_time() - started
    return result


def _print(result: Result, sizes: tuple[int, ...]) -> None:
    r = result
    print(f"\n{r.paradigm} {r.contrast}  (CPU {r.cpu_seconds:.0f} s)")
    shown = ", ".join(f"{k}={v:.4g}" for k, v in r.stated.items())
    print(f"(a) stated --assume {shown}")
    print(
        f"    n/arm {r.stated_units}  half-width predicted {r.stated_halfwidth:.4f} achieved "
        f"{r.achieved_halfwidth:.4f} (ratio {r.achieved_halfwidth / r.stated_halfwidth:.3f})  "
        f"power predicted {r.stated_power:.3f} achieved {r.achieved_power:.3f} "
        f"(SE {math.sqrt(r.achieved_power * (1 - r.achieved_power) / r.runs):.3f}, "
        f"{r.runs} runs)"
    )
    print(
        "(b) pilot size  pilots  n/arm mean [min, max]  power predicted mean (sd)  achieved "
        "mean (sd)  error mean  |error| mean  within 5 points  half-width ratio mean"
    )
    for size in sizes:
        done = [p for p in r.pilots if p["replicates"] == size and "n" in p]
        failed = sum(1 for p in r.pilots if p["replicates"] == size and "failed" in p)
        if not done:
            print(f"    {size:>3} reps: every pilot failed ({failed})")
            continue
        n = np.array([p["n"] for p in done])
        predicted = np.array([p["predicted_power"] for p in done])
        achieved = np.array([p["achieved_power"] for p in done])
        error = predicted - achieved
        spread = (predicted.std(ddof=1), achieved.std(ddof=1)) if len(done) > 1 else (0.0, 0.0)
        ratio = np.array([p["achieved_halfwidth"] / p["predicted_halfwidth"] for p in done])
        print(
            f"    {size:>3} reps ({done[0]['units']} units)  {len(done):>3}"
            f"{'' if not failed else f' (+{failed} failed)'}  {n.mean():6.1f} [{n.min()}, "
            f"{n.max()}]  {predicted.mean():.3f} ({spread[0]:.3f})"
            f"  {achieved.mean():.3f} ({spread[1]:.3f})"
            f"  {error.mean():+.3f}  {np.abs(error).mean():.3f}"
            f"  {(np.abs(error) <= 0.05).sum()}/{len(done)}  {ratio.mean():.3f}"
        )


def main(argv: list[str] | None = None) -> list[Result]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paradigm", choices=sorted(DESIGNS), action="append")
    parser.add_argument("--pilots", type=int, default=8, help="pilots of each size (8)")
    parser.add_argument(
        "--pilot-sizes", help="replicates per item of the pilots, comma-separated (per design)"
    )
    parser.add_argument("--quick", action="store_true", help="10 items, small runs")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    names = args.paradigm or sorted(DESIGNS)
    pilots, scale, items = (2, 0.1, 10) if args.quick else (args.pilots, 1.0, None)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            sizes = DESIGNS[name].pilot_sizes
            if args.pilot_sizes:
                sizes = tuple(int(v) for v in args.pilot_sizes.split(","))
            result = check(name, Path(folder), pilots, scale, items, sizes)
            results.append(result)
            if not args.json:
                _print(result, sizes)
    if args.json:
        print(json.dumps([asdict(r) for r in results]))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
