"""Discussion metrics at scale: the per-conversation figures computed for all conversations at
once against the loop over conversations they replaced, side by side on one 10,000-conversation
discussion run, and the `metrics` and `report` commands on it.

The run is a real run of a discussion design (3 agents, 2 rounds: 6 turns and 9 private probes
per conversation) on the scripted `sim` model, executed in this process, so the tables are
exactly what a run stores. It is built once into `--dir` (reused when it is complete; a
temporary folder by default). Then, in this process, on the same loaded tables: the loop (the
computation as it was, kept here as the baseline) and the vectorised `conversation_figures`,
each timed once, their results compared frame for frame; the ratio loop / vectorised is
measured side by side, so it holds on a shared machine. Then `backchannel metrics RUN --json`
and `backchannel report RUN` each run as their own subprocess (wall time, start-up included,
and peak RSS); those absolute times need a quiet machine.

    python bench/discussion_metrics.py                      # 10,000 conversations
    python bench/discussion_metrics.py --dir runs/dm-bench  # keep the run for the next time
    python bench/discussion_metrics.py --quick              # 100 (seconds; the smoke test)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from backchannel import open_run, run
from backchannel.analysis import RunTables
from backchannel.paradigms.discussion import conversation_figures

EXPERIMENT = """\
name: discussion-metrics-bench-{conversations}
paradigm: discussion
seed: 5
replicates: {replicates}
factors:
  model: [sim]
settings:
  agents: 3
  rounds: 2
  questions:
{questions}
"""
# conversations -> (questions, replicates)
DESIGNS = {100: (10, 10), 10_000: (100, 100)}
COLUMNS = ["conversation_id", "agents", "answer_change_rate", "final_agreement", "failed_probes"]


def loop_figures(tables: RunTables) -> pd.DataFrame:
    """The computation as it was: a dozen pandas operations per conversation, in a loop."""

    def normalise(text: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(text).lower())).strip()

    probes = tables.events[(tables.events["kind"] == "probe") & (tables.events["name"] == "answer")]
    rows = []
    for conversation_id, group in probes.groupby("conversation_id", sort=True):
        failed = int((group["status"] != "ok").sum())
        ok = group[group["status"] == "ok"].copy()
        ok["answer"] = ok["text"].map(normalise)
        first_checkpoint, last_checkpoint = group["round"].min(), group["round"].max()
        first = ok[ok["round"] == first_checkpoint].set_index("agent")["answer"]
        last = ok[ok["round"] == last_checkpoint].set_index("agent")["answer"]
        both = first.index.intersection(last.index)
        change = float((first[both] != last[both]).mean()) if len(both) else float("nan")
        agreement = float((last == last.mode().iloc[0]).mean()) if len(last) else float("nan")
        rows.append(
            {
                "conversation_id": conversation_id,
                "agents": int(group["agent"].nunique()),
                "answer_change_rate": change,
                "final_agreement": agreement,
                "failed_probes": failed,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


@dataclass
class Result:
    conversations: int
    loop_s: float
    vectorised_s: float
    metrics_s: float
    metrics_mib: float
    report_s: float
    report_mib: float

    @property
    def ratio(self) -> float:
        return self.loop_s / self.vectorised_s


def build(directory: Path, conversations: int) -> Path:
    questions, replicates = DESIGNS[conversations]
    path = directory / f"discussion_{conversations}"
    if (path / "run.sqlite").exists() and open_run(path).counts["done"] == conversations:
        return path
    listed = "\n".join(
        f'    - {{id: q{i}, question: "Question number {i}: which answer holds?"}}'
        for i in range(questions)
    )
    experiment = directory / f"discussion_{conversations}.yaml"
    experiment.write_text(
        EXPERIMENT.format(conversations=conversations, replicates=replicates, questions=listed)
    )
    start = time.perf_counter()
    done = run(experiment, path)
    if done.counts["done"] != conversations:
        raise RuntimeError(f"{path}: {done.counts} conversations, expected {conversations}")
    print(f"built {path} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return path


def _backchannel(*args: str) -> tuple[float, float]:
    """Run `backchannel ARGS` to completion: wall seconds and peak RSS in MiB."""
    command = [str(Path(sys.executable).parent / "backchannel"), *args]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {errors.decode(errors='replace')}")
    return seconds, usage.ru_maxrss / 1024


def measure(directory: Path, conversations: int) -> Result:
    path = build(directory, conversations)
    tables = open_run(path).tables
    tables.events  # noqa: B018 - loaded before either clock starts (both read the same frame)
    start = time.perf_counter()
    expected = loop_figures(tables)
    loop_s = time.perf_counter() - start
    start = time.perf_counter()
    got = conversation_figures(tables)
    vectorised_s = time.perf_counter() - start
    pd.testing.assert_frame_equal(got, expected)
    if len(got) != conversations:
        raise RuntimeError(f"{len(got)} conversations in the figures, expected {conversations}")
    metrics_s, metrics_mib = _backchannel("metrics", str(path), "--json")
    with tempfile.TemporaryDirectory() as report:
        report_s, report_mib = _backchannel("report", str(path), "-o", report)
    return Result(conversations, loop_s, vectorised_s, metrics_s, metrics_mib, report_s, report_mib)


def table(result: Result) -> str:
    return "\n".join(
        [
            "| conversations | loop s | vectorised s | loop / vectorised | `metrics` s (MiB) | "
            "`report` s (MiB) |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {result.conversations:,} | {result.loop_s:.2f} | {result.vectorised_s:.3f} | "
            f"{result.ratio:.0f} | {result.metrics_s:.2f} ({result.metrics_mib:.0f}) | "
            f"{result.report_s:.2f} ({result.report_mib:.0f}) |",
        ]
    )


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="keep the run here (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="100 conversations")
    args = parser.parse_args(argv)
    size = 100 if args.quick else 10_000
    with tempfile.TemporaryDirectory(prefix="bench-discussion-") as scratch:
        directory = args.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        result = measure(directory, size)
    print(table(result))
    print(f"per-conversation figures: loop / vectorised = {result.ratio:.0f}x, same frame")
    return result


if __name__ == "__main__":
    main()
