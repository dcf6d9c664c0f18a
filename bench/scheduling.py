"""(b) Scheduling efficiency against a fake server with C slots and fixed latency L.

efficiency = ideal / measured wall time, ideal = max(chain x L, total calls x L / C), where the
chain is a conversation's dependent calls (its turns, then the last checkpoint's probe). The
server runs in a subprocess. Side by side in one run: backchannel's runner (max_in_flight well
above C), and the bare `openai` SDK with the same call pattern as asyncio with a client limit of
C, asyncio with no limit, and a sequential loop. The sequential loop runs only the first few
conversations (the whole workload would take minutes); its time is linear in the calls, so its
wall time is scaled to all calls and compared with the whole workload's ideal.
The `scale` workload runs only backchannel, at 1,000 and at 10,000 conversations, each in a
child process of its own so that its peak resident memory (max RSS) is its own: the 1,000 row is
the baseline the 10,000 row's memory is compared with (a flat driver keeps it about equal).
Run: python bench/scheduling.py --workload many|long|reference|scale [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    Call,
    FakeServerProcess,
    Measured,
    Workload,
    bare_concurrent,
    bare_sequential,
    machine,
    measure,
    run_backchannel,
    sdk_call,
    table,
    temporary_directory,
    warm_up_sdk,
    write_experiment,
)

TARGET = 0.95


@dataclass(frozen=True)
class Setup:
    """A workload, the server's latency and slots, and how much of it the sequential loop runs."""

    workload: Workload
    latency: float
    slots: int
    sequential_conversations: int
    max_in_flight: int = 64

    def __post_init__(self) -> None:
        if self.latency <= 0 or self.slots < 1 or self.max_in_flight < 1:
            raise ValueError("latency must be > 0; slots and max_in_flight at least 1")
        if not 1 <= self.sequential_conversations <= self.workload.conversations:
            raise ValueError("the sequential loop runs 1..conversations conversations")


SETUPS = {
    # 200 conversations of 3 agents x 3 rounds: throughput-bound (calls x L / C dominates).
    "many": Setup(
        Workload(200, 3, 3),
        latency=0.2,
        slots=32,
        sequential_conversations=4,
        max_in_flight=128,
    ),
    # Two long conversations: the chain of 90 turns (and the last probe) is the bound.
    "long": Setup(Workload(2, 3, 30), latency=0.2, slots=8, sequential_conversations=1),
    # The shape of the reference figures: 20 conversations x 28 calls, L = 0.2 s, C = 8.
    "reference": Setup(Workload(20, 4, 3), latency=0.2, slots=8, sequential_conversations=2),
}

# Many short conversations: the driver's memory and scheduling at 1,000 and 10,000 conversations.
SCALE = Setup(
    Workload(10_000, 2, 1), latency=0.2, slots=64, sequential_conversations=1, max_in_flight=128
)
SCALE_SIZES = (1_000, 10_000)
QUICK_SCALE = Setup(Workload(200, 2, 1), latency=0.01, slots=16, sequential_conversations=1)
QUICK_SCALE_SIZES = (20, 200)

QUICK = {
    "many": Setup(Workload(6, 2, 2), latency=0.01, slots=4, sequential_conversations=2),
    "long": Setup(Workload(1, 2, 6), latency=0.01, slots=4, sequential_conversations=1),
    "reference": Setup(Workload(4, 4, 3), latency=0.01, slots=4, sequential_conversations=1),
}


@dataclass(frozen=True)
class Row:
    """One client's measured run and its efficiency against its own workload's ideal."""

    name: str
    measured: Measured
    ideal_s: float
    max_server_concurrency: int
    scale: float = 1.0
    """Calls of the whole workload / calls measured (1 unless the run was a subset)."""

    @property
    def wall_s(self) -> float:
        """Wall time of the whole workload (the measured time, scaled for a subset)."""
        return self.measured.wall_s * self.scale

    @property
    def efficiency(self) -> float:
        return self.ideal_s / self.wall_s


@dataclass(frozen=True)
class Result:
    setup: Setup
    rows: tuple[Row, ...]

    @property
    def backchannel(self) -> Row:
        return self.rows[0]


def _sdk_run(base_url: str, workload: Workload, limit: int | None, sequential: bool) -> Measured:
    async def go() -> int:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
        semaphore = asyncio.Semaphore(limit) if limit is not None else None
        call: Call = sdk_call(client, "fake", semaphore)
        try:
            if sequential:
                return await bare_sequential(call, workload)
            return await bare_concurrent(call, workload)
        finally:
            await client.close()

    return measure(go)


def run(setup: Setup) -> Result:
    """Every client in turn against one server subprocess; checks the server served every call."""
    workload, latency, slots = setup.workload, setup.latency, setup.slots
    sequential_workload = replace(workload, conversations=setup.sequential_conversations)
    rows: list[Row] = []
    with FakeServerProcess(latency=latency, slots=slots) as server, temporary_directory() as root:
        warm_up_sdk(server.base_url)

        ideal = workload.ideal_seconds(latency, slots)

        def row(name: str, load: Workload, measured: Measured, served_before: int) -> Row:
            stats = server.stats()
            served = stats["requests_served"] - served_before
            if served != load.calls or measured.calls != load.calls:
                raise RuntimeError(f"{name}: {served} served, {measured.calls} made, {load.calls}")
            scale = workload.calls / load.calls
            return Row(name, measured, ideal, stats["max_concurrency"], scale)

        experiment = write_experiment(
            root,
            workload,
            model="openai/fake",
            base_url=server.base_url,
            max_in_flight=setup.max_in_flight,
        )
        before = server.stats()["requests_served"]
        measured = run_backchannel(experiment, root / "run", concurrency=setup.max_in_flight)
        rows.append(
            row(f"backchannel, max_in_flight {setup.max_in_flight}", workload, measured, before)
        )
        for name, load, limit, sequential in (
            (f"asyncio + SDK, client limit {slots} (= C)", workload, slots, False),
            ("asyncio + SDK, no client limit", workload, None, False),
            (
                f"sequential + SDK ({sequential_workload.conversations} conversations, scaled)",
                sequential_workload,
                None,
                True,
            ),
        ):
            before = server.stats()["requests_served"]
            rows.append(row(name, load, _sdk_run(server.base_url, load, limit, sequential), before))
    return Result(setup, tuple(rows))


def _scale_child(conversations: int, setup: Setup, base_url: str) -> None:
    """One backchannel run of `conversations` against `base_url`; prints its numbers as JSON."""
    workload = replace(setup.workload, conversations=conversations)
    with temporary_directory() as root:
        experiment = write_experiment(
            root,
            workload,
            model="openai/fake",
            base_url=base_url,
            max_in_flight=setup.max_in_flight,
        )
        measured = run_backchannel(experiment, root / "run", concurrency=setup.max_in_flight)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "wall_s": measured.wall_s,
                "cpu_s": measured.cpu_s,
                "calls": measured.calls,
                "max_rss_mib": peak_kib / 1024,
            }
        )
    )


@dataclass(frozen=True)
class ScaleRow:
    """One size of the scale workload, run in its own child process."""

    conversations: int
    calls: int
    ideal_s: float
    wall_s: float
    cpu_ms_per_call: float
    max_rss_mib: float

    @property
    def efficiency(self) -> float:
        return self.ideal_s / self.wall_s


def run_scale(setup: Setup, sizes: tuple[int, ...], quick: bool) -> list[ScaleRow]:
    """Each size in a child process against one server; efficiency and the child's max RSS."""
    rows: list[ScaleRow] = []
    with FakeServerProcess(latency=setup.latency, slots=setup.slots) as server:
        warm_up_sdk(server.base_url)
        for conversations in sizes:
            workload = replace(setup.workload, conversations=conversations)
            before = server.stats()["requests_served"]
            child = [
                sys.executable,
                __file__,
                "--scale-child",
                str(conversations),
                "--base-url",
                server.base_url,
            ] + (["--quick"] if quick else [])
            output = subprocess.run(child, check=True, capture_output=True, text=True).stdout
            numbers = json.loads(output.strip().splitlines()[-1])
            served = server.stats()["requests_served"] - before
            if served != workload.calls or numbers["calls"] != workload.calls:
                raise RuntimeError(f"{conversations}: {served} served, {workload.calls} expected")
            rows.append(
                ScaleRow(
                    conversations,
                    workload.calls,
                    workload.ideal_seconds(setup.latency, setup.slots),
                    numbers["wall_s"],
                    1000.0 * numbers["cpu_s"] / numbers["calls"],
                    numbers["max_rss_mib"],
                )
            )
    print(f"scheduling at scale, fake server in a subprocess; {machine()}")
    print(
        f"workload scale: {setup.workload.describe()} (at the largest size); "
        f"L = {setup.latency:g} s, C = {setup.slots}, max_in_flight {setup.max_in_flight}"
    )
    headers = ["conversations", "calls", "ideal s", "wall s", "efficiency"]
    headers += ["driver CPU ms/call", "driver max RSS MiB"]
    print(
        table(
            headers,
            [
                (
                    r.conversations,
                    r.calls,
                    r.ideal_s,
                    r.wall_s,
                    r.efficiency,
                    r.cpu_ms_per_call,
                    r.max_rss_mib,
                )
                for r in rows
            ],
        )
    )
    smallest, largest = rows[0], rows[-1]
    verdict = "meets" if largest.efficiency >= TARGET else "misses"
    print(
        f"efficiency at {largest.conversations:,} conversations: {largest.efficiency:.3f} "
        f"({verdict} the {TARGET} target); max RSS {largest.max_rss_mib:.1f} MiB vs "
        f"{smallest.max_rss_mib:.1f} MiB at {smallest.conversations:,} "
        f"(ratio {largest.max_rss_mib / smallest.max_rss_mib:.2f})"
    )
    return rows


def main(argv: list[str] | None = None) -> Result | None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workload", choices=[*sorted(SETUPS), "scale"], default="many")
    parser.add_argument("--quick", action="store_true", help="a tiny workload (seconds)")
    parser.add_argument("--scale-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scale_setup = QUICK_SCALE if args.quick else SCALE
    if args.scale_child is not None:
        _scale_child(args.scale_child, scale_setup, args.base_url)
        return None
    if args.workload == "scale":
        run_scale(scale_setup, QUICK_SCALE_SIZES if args.quick else SCALE_SIZES, args.quick)
        return None
    setup = (QUICK if args.quick else SETUPS)[args.workload]
    result = run(setup)
    print(f"scheduling efficiency, fake server in a subprocess; {machine()}")
    print(
        f"workload {args.workload}: {setup.workload.describe()}; "
        f"L = {setup.latency:g} s, C = {setup.slots}"
    )
    print(
        table(
            ["client", "calls run", "ideal s", "wall s", "efficiency", "server max C"],
            [
                (
                    r.name,
                    r.measured.calls,
                    r.ideal_s,
                    r.wall_s,
                    r.efficiency,
                    r.max_server_concurrency,
                )
                for r in result.rows
            ],
        )
    )
    efficiency = result.backchannel.efficiency
    verdict = "meets" if efficiency >= TARGET else "misses"
    print(f"backchannel efficiency: {efficiency:.3f} ({verdict} the {TARGET} target)")
    return result


if __name__ == "__main__":
    main()
