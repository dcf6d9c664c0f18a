"""(b) Scheduling efficiency against a fake server with C slots and fixed latency L.

efficiency = ideal / measured wall time, ideal = max(chain x L, total calls x L / C), where the
chain is a conversation's dependent calls (its turns, then the last checkpoint's probe). The
server runs in a subprocess. Side by side in one run: backchannel's runner (max_in_flight well
above C), and the bare `openai` SDK with the same call pattern as asyncio with a client limit of
C, asyncio with no limit, and a sequential loop. The sequential loop runs only the first few
conversations (the whole workload would take minutes); its time is linear in the calls, so its
wall time is scaled to all calls and compared with the whole workload's ideal.
Run: python bench/scheduling.py --workload many|long|reference [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
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


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workload", choices=sorted(SETUPS), default="many")
    parser.add_argument("--quick", action="store_true", help="a tiny workload (seconds)")
    args = parser.parse_args(argv)
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
