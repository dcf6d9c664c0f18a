"""Analysis at scale: `metrics`, `metrics --tables` and `report` on a 1,000- and a 10,000-
conversation peer-pressure run, with each command's peak memory.

The runs are real runs of a peer-pressure design (N = 4 agents, T = 3 rounds, k in {0, 1},
inline rule judge) on `sim/population`, executed in this process, so every metric has data
and the analysis sees exactly what it sees after any run. They are built once into `--dir`
(reused when they are already there and complete; a temporary folder by default), exported to
Parquet for `--tables`, and then every command runs as its own `backchannel` subprocess: the
time is the subprocess's wall time (start-up included, as a user waits for it) and the memory
its peak resident set (`os.wait4`).

    python bench/analysis.py                       # 1,000 and 10,000 conversations
    python bench/analysis.py --dir runs/analysis   # keep the runs for the next time
    python bench/analysis.py --quick               # 20 and 100 (seconds; the smoke test)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from backchannel import open_run, run

TARGETS = {"metrics": 5.0, "metrics --tables": 5.0, "report": 20.0}
EXPERIMENT = """\
name: analysis-bench-{conversations}
paradigm: peer_pressure
seed: 13
replicates: {replicates}
factors:
  model: [sim/population]
  k: [0, 1]
settings:
  datasets:
    - {{name: counterfact, limit: {items}}}
  n_agents: 4
  rounds: 3
  memory_rounds: 5
  judge:
    kind: rule
"""
# conversations -> (items, replicates): 2 cells x items x replicates conversations
DESIGNS = {20: (10, 1), 100: (50, 1), 1_000: (100, 5), 10_000: (200, 25)}


@dataclass
class Timing:
    conversations: int
    command: str
    seconds: float
    peak_mib: float

    @property
    def ms_per_conversation(self) -> float:
        return 1000 * self.seconds / self.conversations

    @property
    def ratio(self) -> float:
        """Seconds over the command's target (the target is for 10,000 conversations)."""
        return self.seconds / TARGETS[self.command]


@dataclass
class Result:
    timings: list[Timing]


def build(directory: Path, conversations: int) -> Path:
    """The run of `conversations` conversations in `directory` (made once) and its Parquet
    export beside it."""
    items, replicates = DESIGNS[conversations]
    path = directory / f"peer_pressure_{conversations}"
    exported = directory / f"peer_pressure_{conversations}_tables"
    if not _complete(path, conversations):
        experiment = directory / f"peer_pressure_{conversations}.yaml"
        experiment.write_text(
            EXPERIMENT.format(conversations=conversations, items=items, replicates=replicates)
        )
        start = time.perf_counter()
        done = run(experiment, path)
        if done.counts["done"] != conversations:
            raise RuntimeError(f"{path}: {done.counts} conversations, expected {conversations}")
        print(f"built {path} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if not (exported / "events.parquet").exists():
        _backchannel("export", str(path), "-o", str(exported))
    return path


def _complete(path: Path, conversations: int) -> bool:
    if not (path / "run.sqlite").exists():
        return False
    return open_run(path).counts["done"] == conversations


def _backchannel(*args: str) -> tuple[float, float, str]:
    """Run `backchannel ARGS` to completion: wall seconds, peak RSS in MiB, stdout."""
    command = [str(Path(sys.executable).parent / "backchannel"), *args]
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.PIPE)
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            message = errors.decode(errors="replace").strip()
            raise RuntimeError(f"{' '.join(args)} exited {process.returncode}: {message}")
        output.seek(0)
        return seconds, usage.ru_maxrss / 1024, output.read().decode()


def measure(directory: Path, conversations: int) -> list[Timing]:
    """Time the three commands on one run; check that both metrics paths agree."""
    path = build(directory, conversations)
    tables = directory / f"peer_pressure_{conversations}_tables"
    seconds, peak, printed = _backchannel("metrics", str(path), "--json")
    from_run = json.loads(printed)
    timings = [Timing(conversations, "metrics", seconds, peak)]
    seconds, peak, printed = _backchannel("metrics", "--tables", str(tables), "--json")
    if json.loads(printed) != from_run:
        raise RuntimeError(f"{path}: metrics from the exported tables differ from the run's")
    timings.append(Timing(conversations, "metrics --tables", seconds, peak))
    with tempfile.TemporaryDirectory() as report:
        seconds, peak, _ = _backchannel("report", str(path), "-o", report)
        if not (Path(report) / "report.html").exists():
            raise RuntimeError(f"{path}: the report wrote no report.html")
    timings.append(Timing(conversations, "report", seconds, peak))
    return timings


def table(timings: list[Timing]) -> str:
    lines = [
        "| conversations | command | seconds | ms per conversation | target (10k) | "
        "seconds / target | peak RSS MiB |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for t in timings:
        lines.append(
            f"| {t.conversations:,} | `{t.command}` | {t.seconds:.2f} | "
            f"{t.ms_per_conversation:.2f} | {TARGETS[t.command]:.0f} s | {t.ratio:.2f} | "
            f"{t.peak_mib:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="20 and 100 conversations")
    args = parser.parse_args(argv)
    sizes = (20, 100) if args.quick else (1_000, 10_000)
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as scratch:
        directory = args.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        timings = [t for size in sizes for t in measure(directory, size)]
    print(table(timings))
    by_size = {(t.conversations, t.command): t.seconds for t in timings}
    small, large = sizes
    for command in TARGETS:
        growth = by_size[(large, command)] / by_size[(small, command)]
        print(f"{command}: {large:,} / {small:,} conversations = {growth:.1f}x the time")
    return Result(timings)


if __name__ == "__main__":
    main()
