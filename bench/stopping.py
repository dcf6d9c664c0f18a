"""Precision stopping (`run --until`) against the fixed design, on `sim/population` with a
planted effect: the calls each needs, and how often the 95 % interval of the headline contrast
covers the planted value.

The design is peer pressure with k in {0, 1} (one adversary among three agents), T rounds, full
memory and `peer_weight: 0`, so the planted final private infection is 1 - (1 - adopt)^T at
k = 1 and 0 at k = 0: the planted `fpi_gap` is 1 - (1 - adopt)^T (docs/population.md). Every
simulated run gets its own population (`sim/population#run<i>`: the model's name is part of
every draw) and its own seed. A stopped run's interval is the one of its last look, read from
the manifest; a fixed run's is the same contrast on the whole design.

    python bench/stopping.py                # 200 stopped runs, 50 fixed runs beside them
    python bench/stopping.py --quick        # a few runs of a smaller design
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel import orchestration

CONTRAST = "fpi_gap"
CALLS_TARGET = 0.30  # at least 30 % fewer calls than the fixed design
COVERAGE_TARGET = 0.93  # of the planted value, over the stopped runs


@dataclass(frozen=True)
class Design:
    """One bench design: items x replicates (the ceiling) per cell, the stopping rule, the
    planted rate."""

    items: int
    replicates: int
    halfwidth: float
    batch: int
    first: int
    rounds: int = 1
    adopt: float = 0.5

    @property
    def planted(self) -> float:
        return 1 - (1 - self.adopt) ** self.rounds

    def experiment(self, index: int) -> dict[str, Any]:
        return {
            "name": f"stopping-{index}",
            "paradigm": "peer_pressure",
            "seed": index,
            "replicates": self.replicates,
            "factors": {"model": [f"sim/population#run{index}"], "k": [0, 1]},
            "settings": {
                "datasets": [{"name": "counterfact", "limit": self.items}],
                "n_agents": 3,
                "rounds": self.rounds,
                "memory_rounds": self.rounds,
                "judge": {"kind": "rule"},
            },
            "stopping": {"batch": self.batch, "first": self.first},
            "population": {"peer_pressure": {"adopt": self.adopt, "peer_weight": 0.0}},
        }

    @property
    def until(self) -> str:
        return f"{CONTRAST}.halfwidth<={self.halfwidth}"


FULL = Design(items=4, replicates=16, halfwidth=0.12, batch=1, first=3)
QUICK = Design(items=2, replicates=6, halfwidth=0.25, batch=1, first=2)


@dataclass(frozen=True)
class Outcome:
    """One simulated run: calls, replicates and conversations used, and its interval."""

    calls: int
    replicates: int
    conversations: int
    estimate: float
    halfwidth: float
    stop: str

    def covers(self, planted: float) -> bool:
        return abs(self.estimate - planted) <= self.halfwidth


def _reading(run: bc.Run, factors: dict[str, list[Any]]) -> tuple[float, float]:
    """The contrast's estimate and half-width on everything the run stored, read as a look
    reads it."""
    reading = orchestration.contrast_reader(run.paradigm, factors)(run.tables)[CONTRAST]
    if reading.estimate is None or reading.halfwidth is None:
        raise RuntimeError(f"{run.path}: {CONTRAST} not computable ({reading.skipped})")
    return reading.estimate, reading.halfwidth


async def one_run(design: Design, index: int, folder: Path, stopped: bool) -> Outcome:
    path = folder / f"{index}-{'stopped' if stopped else 'fixed'}.yaml"
    experiment = design.experiment(index)
    path.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    run = await bc.arun(path, path.with_suffix(""), until=design.until if stopped else None)
    if run.counts["done"] != len(run.conversations):
        raise RuntimeError(f"{run.path}: unfinished conversations {run.counts}")
    if stopped:
        last = run.manifest["stopping"]["looks"][-1]
        reading = last["contrasts"][CONTRAST]
        return Outcome(
            last["calls"],
            last["replicates"],
            last["conversations"],
            reading["estimate"],
            reading["halfwidth"],
            last["stop"],
        )
    estimate, halfwidth = _reading(run, experiment["factors"])
    calls = _stored_calls(run.path)
    return Outcome(calls, design.replicates, len(run.conversations), estimate, halfwidth, "design")


def _stored_calls(path: Path) -> int:
    """Calls of the stored conversations, as a look counts them (cache hits included)."""
    from backchannel.store import RunStore

    store = RunStore(path, readonly=True)
    try:
        return store.usage().total().calls
    finally:
        store.close()


@dataclass(frozen=True)
class Result:
    design: Design
    stopped: list[Outcome]
    fixed: list[Outcome]

    @property
    def calls_ratio(self) -> float:
        fixed = statistics.mean(o.calls for o in self.fixed)
        return statistics.mean(o.calls for o in self.stopped) / fixed

    def coverage(self, outcomes: Sequence[Outcome]) -> float:
        return sum(o.covers(self.design.planted) for o in outcomes) / len(outcomes)


def _row(name: str, outcomes: Sequence[Outcome], result: Result) -> str:
    planted = result.design.planted
    return (
        f"| {name} | {len(outcomes)} | {statistics.mean(o.replicates for o in outcomes):.2f} | "
        f"{statistics.mean(o.calls for o in outcomes):.1f} | "
        f"{statistics.mean(o.estimate for o in outcomes) - planted:+.4f} | "
        f"{statistics.mean(o.halfwidth for o in outcomes):.4f} | "
        f"{result.coverage(outcomes):.3f} |"
    )


def report(result: Result) -> None:
    design = result.design
    stops = [o.stop for o in result.stopped]
    print(
        f"peer pressure on sim/population, k in {{0, 1}}, 3 agents, {design.rounds} rounds, "
        f"{design.items} items, ceiling {design.replicates} replicates; planted {CONTRAST} "
        f"{design.planted:.4f} (adopt {design.adopt}); --until {design.until!r}, "
        f"batches of {design.batch} replicate(s) after a first of {design.first}"
    )
    print()
    print("| design | runs | replicates used | calls (mean) | bias | half-width | coverage |")
    print("|---|---|---|---|---|---|---|")
    print(_row("--until (stopped)", result.stopped, result))
    print(_row("fixed design", result.fixed, result))
    print()
    ratio = result.calls_ratio
    coverage = result.coverage(result.stopped)
    print(
        f"stopped on the target: {stops.count('target')} of {len(stops)}, at the ceiling: "
        f"{stops.count('ceiling')}"
    )
    print(
        f"calls stopped / fixed: {ratio:.3f} ({1 - ratio:.1%} fewer; target at least "
        f"{CALLS_TARGET:.0%} fewer: {'met' if 1 - ratio >= CALLS_TARGET else 'missed'})"
    )
    print(
        f"coverage of the planted value, stopped runs: {coverage:.3f} "
        f"(target at least {COVERAGE_TARGET:.0%}: "
        f"{'met' if coverage >= COVERAGE_TARGET else 'missed'}); fixed runs: "
        f"{result.coverage(result.fixed):.3f}"
    )


async def measure(design: Design, runs: int, fixed_runs: int) -> Result:
    with tempfile.TemporaryDirectory(prefix="bench-stopping-") as name:
        folder = Path(name)
        stopped = [await one_run(design, i, folder, True) for i in range(runs)]
        fixed = [await one_run(design, i, folder, False) for i in range(fixed_runs)]
    return Result(design, stopped, fixed)


def main(argv: Sequence[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help="stopped runs (default 200)")
    parser.add_argument("--fixed-runs", type=int, default=None, help="fixed runs (default 50)")
    parser.add_argument("--quick", action="store_true", help="a few runs of a small design")
    args = parser.parse_args(argv)
    design = QUICK if args.quick else FULL
    runs = args.runs if args.runs is not None else (4 if args.quick else 200)
    fixed_runs = args.fixed_runs if args.fixed_runs is not None else (2 if args.quick else 50)
    result = asyncio.run(measure(design, runs, max(1, fixed_runs)))
    report(result)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
