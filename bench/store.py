"""The run store at scale: real runs on `sim/population`, peer pressure and testimony, at
1,000, 10,000 and 100,000 conversations.

For each run: store bytes per conversation (and, with `--baseline SRC`, the same run built by
the source tree SRC, e.g. a checkout of an earlier version, side by side); the run's own wall
time and peak memory; resuming the finished run (0 calls expected); `status`, `metrics --json`,
`report`, `export` (Parquet and CSV), each a fresh `backchannel` process: wall seconds and peak
resident memory (`os.wait4`); and the viewer: its start until the first page of conversations
has answered, that page alone, and one conversation (median of 5), over its JSON API.

    python bench/store.py --sizes 1000 --baseline /path/to/checkout    # bytes beside SRC's
    python bench/store.py --dir runs/store-bench                      # 1,000 to 100,000 (hours)
    python bench/store.py --quick                                     # 20 and 100 (seconds)
    python bench/store.py --dir DIR --commands metrics,report --against SRC --repeats 2

`--against SRC` times `status`, `metrics` and `report` of the source tree SRC too, alternately
with this tree's on the same runs, prints after / against, and says whether the two `metrics
--json` outputs are identical. `--repeats N` times each of those N times (the median is shown).
Bytes do not depend on the machine's load; times do (run the timed sizes on a quiet machine).
On a virtual machine that hands freed memory back to its host, every command pays system time
for the memory it touches (about 2.2 s per GiB on the 2-core machine of bench/RESULTS.md, and
memory freed is cold again within about 30 s): compare trees alternately, as `--against` does.
Runs are built once into `--dir` and reused when complete.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

TARGETS_100K = {"status": 2.0, "metrics": 30.0, "report": 60.0, "first page": 1.0}
PEER_PRESSURE = """\
name: store-bench-peer-pressure-{conversations}
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
# Two simulated models, C0 and C1, all 120 shipped stories: 480 conversations a replicate.
TESTIMONY = """\
name: store-bench-testimony-{conversations}
paradigm: testimony
seed: 2026
replicates: {replicates}
factors:
  model: [sim/population#trusting, sim/population#wary]
  condition: [C0, C1]
settings:
  deceptions: [event, coverage, source]
  intervention: none
population:
  testimony: {{observation: 1.5, trust: 0.9}}
  models:
    wary: {{testimony: {{trust: 0.4}}}}
"""


def experiment_text(paradigm: str, conversations: int) -> str:
    if paradigm == "peer_pressure":
        items = min(200, max(1, conversations // 2))
        replicates = math.ceil(conversations / (2 * items))
        return PEER_PRESSURE.format(conversations=conversations, items=items, replicates=replicates)
    replicates = math.ceil(conversations / 480)
    return TESTIMONY.format(conversations=conversations, replicates=replicates)


@dataclass
class Command:
    name: str
    seconds: float
    peak_mib: float
    against_seconds: float | None = None
    """The same command on the `--against` tree (median of the repeats)."""
    against_peak_mib: float | None = None
    same_output: bool | None = None
    """For `metrics`: whether both trees printed the same `--json`."""


@dataclass
class Measured:
    paradigm: str
    conversations: int
    store_bytes: int
    cache_bytes: int
    baseline_bytes: int | None
    commands: list[Command] = field(default_factory=list)

    @property
    def per_conversation(self) -> float:
        return self.store_bytes / self.conversations

    @property
    def baseline_per_conversation(self) -> float | None:
        return None if self.baseline_bytes is None else self.baseline_bytes / self.conversations


_BACKCHANNEL = [sys.executable, "-c", "from backchannel._entry import main; main()"]
"""The `backchannel` command of whichever tree PYTHONPATH puts first."""


def _environment(source: Path | None) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    if source is not None:
        env["PYTHONPATH"] = str(source / "src")
    return env


def backchannel(*args: str, source: Path | None = None) -> tuple[float, float, str]:
    """`backchannel ARGS` (of `source`'s tree when given) to completion: wall seconds, peak
    RSS in MiB, what it printed (stdout, then stderr)."""
    command = [*_BACKCHANNEL, *args]
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=output, stderr=errors, env=_environment(source))
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        output.seek(0)
        errors.seek(0)
        if code != 0:
            message = errors.read().decode(errors="replace").strip()[-2000:]
            raise RuntimeError(f"backchannel {' '.join(args)} exited {code}: {message}")
        printed = output.read().decode() + errors.read().decode(errors="replace")
        return seconds, usage.ru_maxrss / 1024, printed


def _done(run: Path) -> int:
    path = run / "run.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(
            db.execute("SELECT COUNT(*) FROM conversations WHERE status = 'done'").fetchone()[0]
        )
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def build(
    directory: Path, paradigm: str, conversations: int, source: Path | None = None
) -> tuple[Path, Command | None]:
    """The run (built once, by `source`'s tree when given) and the build's measurement."""
    tag = "baseline" if source is not None else "store"
    run = directory / f"{paradigm}_{conversations}_{tag}"
    experiment = directory / f"{paradigm}_{conversations}.yaml"
    experiment.write_text(experiment_text(paradigm, conversations))
    if _done(run) == conversations:
        return run, None
    limit = ["--limit", str(conversations)]
    seconds, peak, _ = backchannel("run", str(experiment), "-o", str(run), *limit, source=source)
    if _done(run) != conversations:
        raise RuntimeError(f"{run}: {_done(run)} conversations done, expected {conversations}")
    return run, Command("run", seconds, peak)


class Viewer:
    """`backchannel view RUN --port 0` in a subprocess, timed from its start."""

    def __init__(self, run: Path) -> None:
        self.started = time.perf_counter()
        command = [*_BACKCHANNEL, "view", str(run), "--port", "0"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, env=_environment(None)
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            self.close()
            raise RuntimeError(f"the viewer did not start: {line!r}")
        self.url = found.group(0).rstrip("/")

    def get(self, path: str, **params: object) -> object:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=300) as response:
            return json.loads(response.read())

    def peak_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _timed(function: object, *args: object, **kwargs: object) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)  # type: ignore[operator]
    return time.perf_counter() - start, result


def view(run: Path, conversations: int) -> list[Command]:
    viewer = Viewer(run)
    try:
        page = viewer.get("/api/runs/0/conversations", limit=50)
        from_start = time.perf_counter() - viewer.started
        assert isinstance(page, dict) and page["total"] == conversations, page
        alone, _ = _timed(viewer.get, "/api/runs/0/conversations", limit=50)
        middle = page["conversations"][len(page["conversations"]) // 2]["conversation_id"]
        times = [_timed(viewer.get, "/api/runs/0/conversation", id=middle)[0] for _ in range(5)]
        peak = viewer.peak_mib()
    finally:
        viewer.close()
    return [
        Command("view: start to first page", from_start, peak),
        Command("view: first page", alone, peak),
        Command("view: one conversation", statistics.median(times), peak),
    ]


COMMANDS = ("resume", "status", "metrics", "report", "export", "view")


def side_by_side(name: str, args: list[str], against: Path | None, repeats: int) -> Command:
    """`backchannel ARGS` timed `repeats` times (medians), alternately with the `against`
    tree's when given; for `metrics`, whether the two printed the same."""
    mine: list[tuple[float, float, str]] = []
    theirs: list[tuple[float, float, str]] = []
    for _ in range(repeats):
        mine.append(backchannel(*args))
        if against is not None:
            theirs.append(backchannel(*args, source=against))
    command = Command(
        name, statistics.median(m[0] for m in mine), statistics.median(m[1] for m in mine)
    )
    if theirs:
        command.against_seconds = statistics.median(t[0] for t in theirs)
        command.against_peak_mib = statistics.median(t[1] for t in theirs)
        if name == "metrics":
            command.same_output = all(t[2] == mine[0][2] for t in [*mine, *theirs])
    return command


def measure(
    directory: Path,
    paradigm: str,
    conversations: int,
    baseline: Path | None,
    commands: Sequence[str] = COMMANDS,
    against: Path | None = None,
    repeats: int = 1,
) -> Measured:
    """The run's bytes and the `commands` (all of `COMMANDS` by default) timed on it; status,
    metrics and report `repeats` times, beside the `against` tree's when given."""
    run, built = build(directory, paradigm, conversations)
    measured = Measured(
        paradigm,
        conversations,
        (run / "run.sqlite").stat().st_size,
        (run / "cache.sqlite").stat().st_size if (run / "cache.sqlite").exists() else 0,
        None,
    )
    if baseline is not None:
        other, _ = build(directory, paradigm, conversations, baseline)
        measured.baseline_bytes = (other / "run.sqlite").stat().st_size
    if built is not None:
        measured.commands.append(built)
    experiment = directory / f"{paradigm}_{conversations}.yaml"
    if "resume" in commands:
        seconds, peak, printed = backchannel(
            "run", str(experiment), "-o", str(run), "--limit", str(conversations)
        )
        calls = re.search(r"calls (\d+)", printed)
        if calls is None or int(calls.group(1)) != 0:
            raise RuntimeError(f"resuming the finished run {run} made calls: {printed[-500:]}")
        measured.commands.append(Command("resume (0 calls)", seconds, peak))
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        for name, args in (
            ("status", ["status", str(run)]),
            ("metrics", ["metrics", str(run), "--json"]),
            ("report", ["report", str(run), "-o", f"{scratch}/report"]),
        ):
            if name in commands:
                measured.commands.append(side_by_side(name, args, against, repeats))
        for fmt in ("parquet", "csv") if "export" in commands else ():
            seconds, peak, _ = backchannel(
                "export", str(run), "-o", f"{scratch}/{fmt}", "--format", fmt
            )
            measured.commands.append(Command(f"export {fmt}", seconds, peak))
    if "view" in commands:
        measured.commands.extend(view(run, conversations))
    return measured


def bytes_table(results: list[Measured]) -> str:
    lines = [
        "| paradigm | conversations | run.sqlite bytes / conversation | baseline bytes / "
        "conversation | ratio | cache.sqlite bytes / conversation |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for m in results:
        base = m.baseline_per_conversation
        lines.append(
            f"| {m.paradigm} | {m.conversations:,} | {m.per_conversation:,.0f} | "
            f"{'' if base is None else f'{base:,.0f}'} | "
            f"{'' if base is None else f'{m.per_conversation / base:.1%}'} | "
            f"{m.cache_bytes / m.conversations:,.0f} |"
        )
    return "\n".join(lines)


def times_table(results: list[Measured]) -> str:
    lines = [
        "| paradigm | conversations | command | seconds | peak RSS MiB |",
        "|---|---:|---|---:|---:|",
    ]
    for m in results:
        for c in m.commands:
            lines.append(
                f"| {m.paradigm} | {m.conversations:,} | {c.name} | {c.seconds:.3f} | "
                f"{c.peak_mib:.0f} |"
            )
    return "\n".join(lines)


def against_table(results: list[Measured], against: Path) -> str:
    """The commands timed on both trees: seconds and peak memory, after / against."""
    lines = [
        "| paradigm | conversations | command | against s (MiB) | this tree s (MiB) | "
        "this / against | `--json` |\n|---|---:|---|---:|---:|---:|---|"
    ]
    for m in results:
        for c in m.commands:
            if c.against_seconds is None or c.against_peak_mib is None:
                continue
            same = {None: "", True: "identical", False: "**differs**"}[c.same_output]
            lines.append(
                f"| {m.paradigm} | {m.conversations:,} | {c.name} | "
                f"{c.against_seconds:.2f} ({c.against_peak_mib:,.0f}) | "
                f"{c.seconds:.2f} ({c.peak_mib:,.0f}) | {c.seconds / c.against_seconds:.2f} | "
                f"{same} |"
            )
    return f"against {against}:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> list[Measured]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dir", type=Path, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated")
    parser.add_argument("--paradigms", default="peer_pressure,testimony")
    parser.add_argument("--baseline", type=Path, help="a source tree to build the same runs with")
    parser.add_argument("--quick", action="store_true", help="20 and 100 conversations")
    parser.add_argument(
        "--commands",
        default=",".join(COMMANDS),
        help=f"which to time, comma-separated (default all: {','.join(COMMANDS)})",
    )
    parser.add_argument("--against", type=Path, help="a source tree to time beside this one")
    parser.add_argument("--repeats", type=int, default=1, help="times to run each command")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    commands = args.commands.split(",")
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        parser.error(f"unknown commands {unknown}; choose from {','.join(COMMANDS)}")
    sizes = [20, 100] if args.quick else [int(s) for s in args.sizes.split(",")]
    paradigms = args.paradigms.split(",")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-store-") as scratch:
        directory = args.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            for paradigm in paradigms:
                results.append(
                    measure(
                        directory,
                        paradigm,
                        size,
                        args.baseline,
                        commands,
                        args.against,
                        args.repeats,
                    )
                )
                print(f"measured {paradigm} at {size:,}", file=sys.stderr)
                print(times_table(results[-1:]), file=sys.stderr, flush=True)
    print(bytes_table(results))
    print()
    print(times_table(results))
    if args.against is not None:
        print()
        print(against_table(results, args.against))
    return results


if __name__ == "__main__":
    main()
