"""CPU time of the commands a user waits on before any work starts: `backchannel --help`,
`backchannel status RUN` and `backchannel metrics RUN --json` on a small sim run this script
makes, beside the interpreter's own start (`python -c pass`) and `python -c "import backchannel"`.

Each command runs as a fresh process several times; its CPU time (user + sys of the finished
child, `resource.getrusage(RUSAGE_CHILDREN)`) is reported as the median. Target: `--help` and
`status` under 0.3 s.

    python bench/startup.py [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
TARGET_S = 0.3
TARGETED = ("backchannel --help", "backchannel status RUN")


@dataclass(frozen=True)
class Row:
    """One command: the median CPU seconds of its runs, and the median wall seconds beside it."""

    label: str
    cpu_s: float
    wall_s: float
    runs: int


def backchannel_command() -> list[str]:
    """The installed console script beside this interpreter, else the same entry point by -c."""
    script = Path(sys.executable).with_name("backchannel")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from backchannel._entry import main; main()"]


def child_cpu(command: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (user + sys) and wall seconds of one run of `command`, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(list(command), env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def measure(label: str, command: Sequence[str], env: dict[str, str], repeats: int) -> Row:
    """The median of `repeats` runs, after one unmeasured run that warms the file cache."""
    child_cpu(command, env)
    samples = [child_cpu(command, env) for _ in range(repeats)]
    return Row(
        label,
        statistics.median(cpu for cpu, _ in samples),
        statistics.median(wall for _, wall in samples),
        repeats,
    )


def make_run(directory: Path, env: dict[str, str], limit: int | None) -> Path:
    """The quickstart on `--model sim` (its 4 conversations, or the first `limit`)."""
    run = directory / "quickstart"
    command = [*backchannel_command(), "run", str(QUICKSTART), "-o", str(run), "--model", "sim"]
    if limit is not None:
        command += ["--limit", str(limit)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the sim run failed ({done.returncode}): {done.stderr[-500:]}")
    return run


def check_status(run: Path, env: dict[str, str], conversations: int) -> None:
    """The measured `status` really read the run: it names every stored conversation."""
    done = subprocess.run(
        [*backchannel_command(), "status", str(run)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    expected = f"conversations: {conversations} done, 0 incomplete, 0 failed"
    if expected not in done.stdout:
        raise RuntimeError(f"status did not report {expected!r}: {done.stdout[-500:]}")


def table(rows: Sequence[Row]) -> str:
    base = rows[0].cpu_s
    lines = [
        "| command | CPU s (median) | wall s (median) | x `python -c pass` | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = f"{row.cpu_s / base:.1f}" if base > 0 else "n/a"
        targeted = row.label in TARGETED
        target = f"< {TARGET_S} s" if targeted else ""
        met = ("yes" if row.cpu_s < TARGET_S else "no") if targeted else ""
        lines.append(
            f"| `{row.label}` | {row.cpu_s:.3f} | {row.wall_s:.3f} | {ratio} | {target} | {met} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="measured runs per command")
    parser.add_argument("--quick", action="store_true", help="3 runs each, a 2-conversation run")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    limit = 2 if args.quick else None
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    bc = backchannel_command()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        run = make_run(Path(folder), env, limit)
        conversations = limit or 4
        check_status(run, env, conversations)
        commands: list[tuple[str, list[str]]] = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ('python -c "import backchannel"', [sys.executable, "-c", "import backchannel"]),
            ("backchannel --help", [*bc, "--help"]),
            ("backchannel status RUN", [*bc, "status", str(run)]),
            ("backchannel metrics RUN --json", [*bc, "metrics", str(run), "--json"]),
        ]
        rows = [measure(label, command, env, repeats) for label, command in commands]
    print(
        f"startup: quickstart on --model sim ({conversations} conversations), median of "
        f"{repeats} runs per command; {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print()
    print(table(rows))
    return rows


if __name__ == "__main__":
    main()
