"""(a) Framework CPU per call with the instant `sim` backend, and where it goes.

A discussion workload runs through the real runner (`orchestration.plan/execute` into a
temporary run directory, SQLite store and response cache included); CPU time is
time.process_time around execute. The split peels one layer at a time: no response cache; no
cache and no store (the engine and scheduler alone); and finally a constant backend instead of
`sim` (what the engine, client and parsing cost without the sim's own hashing). Within the full
runner, the CPU of the store's compact form (assembling and zstd-compressing each conversation's
documents: its meta, its events' meta, its prompts) is timed on its own and given as a share of
the runner's CPU per call (target: at most 5 %).
Run: python bench/overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    Measured,
    Workload,
    machine,
    run_backchannel,
    table,
    temporary_directory,
    write_experiment,
)

from backchannel import orchestration
from backchannel.backends import LLMClient, RawCompletion, Request, Route, build_client
from backchannel.engine import ConversationOutcome, ConversationSpec, run_conversation, schedule
from backchannel.experiment import LoadedExperiment, load_experiment
from backchannel.store._rows import Writer

TARGET_MS = 1.0
COMPACT_TARGET = 0.05


class ConstantBackend:
    """Answers every request at once with the same text (no hashing, no I/O)."""

    endpoint = "constant"

    async def generate(self, request: Request) -> RawCompletion:
        return RawCompletion(text="A constant reply.", prompt_tokens=10, completion_tokens=4)

    async def aclose(self) -> None:
        return None


def _engine_only(loaded: LoadedExperiment, client: LLMClient) -> Measured:
    """Every conversation through the scheduler, with nothing stored."""
    run_plan = orchestration.plan(loaded)

    async def start(position: int, spec: ConversationSpec) -> ConversationOutcome:
        return await run_conversation(
            spec, position, loaded.paradigm.run, loaded.settings, client, loaded.experiment.seed
        )

    failed: list[str] = []

    def on_done(outcome: ConversationOutcome) -> None:
        if outcome.status != "done":
            failed.append(outcome.error or outcome.status)

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(schedule(run_plan.todo, start, on_done, max_active=256))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if failed:
        raise RuntimeError(f"conversations failed: {failed[:3]}")
    return Measured(wall, cpu, client.usage.total().calls)


@contextmanager
def timing_compact_form() -> Iterator[list[float]]:
    """CPU seconds spent writing the compact form's documents while the block runs."""
    spent = [0.0]
    real = Writer._document

    def timed(self: Writer, conv: int, part: str, text: str) -> None:
        start = time.process_time()
        try:
            real(self, conv, part, text)
        finally:
            spent[0] += time.process_time() - start

    Writer._document = timed
    try:
        yield spent
    finally:
        Writer._document = real


@dataclass(frozen=True)
class Result:
    """CPU per call of each configuration, from the full runner down to the bare engine."""

    workload: Workload
    rows: tuple[tuple[str, Measured], ...]
    compact_ms_per_call: float

    @property
    def full(self) -> Measured:
        return self.rows[0][1]


def run(workload: Workload, *, repeats: int = 1) -> Result:
    """Each configuration `repeats` times on the same workload; the lowest CPU/call of each."""
    best: dict[str, Measured] = {}
    compact: dict[str, float] = {}

    def keep(name: str, measured: Measured) -> None:
        if name not in best or measured.cpu_ms_per_call < best[name].cpu_ms_per_call:
            best[name] = measured

    with temporary_directory() as root:
        experiment = write_experiment(root, workload, model="sim")
        loaded = load_experiment(experiment)
        for repeat in range(repeats):
            with timing_compact_form() as spent:
                full = run_backchannel(experiment, root / f"full{repeat}", concurrency=None)
            keep("runner: store + cache + sim", full)
            if best["runner: store + cache + sim"] is full:
                compact["ms"] = 1000 * spent[0] / full.calls
            no_cache = orchestration.plan(loaded)
            store = orchestration.open_run_directory(root / f"nocache{repeat}", loaded)
            client = build_client(no_cache.models, cache=None)
            wall, cpu = time.perf_counter(), time.process_time()
            counts = asyncio.run(
                orchestration.execute(no_cache, store, client=client, max_active=256)
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            store.close()
            if counts["done"] != workload.conversations:
                raise RuntimeError(f"runner without cache: {counts}")
            keep("runner: store + sim (no cache)", Measured(wall, cpu, client.usage.total().calls))
            keep(
                "engine + sim (no cache, no store)",
                _engine_only(loaded, build_client(no_cache.models, cache=None)),
            )
            constant = LLMClient({"sim": Route(ConstantBackend())})
            keep("engine + constant backend", _engine_only(loaded, constant))
    rows = tuple(best.items())
    for name, measured in rows:
        if measured.calls != workload.calls:
            raise RuntimeError(f"{name}: {measured.calls} calls, expected {workload.calls}")
    return Result(workload, rows, compact["ms"])


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds)")
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    conversations = args.conversations or (5 if args.quick else 200)
    repeats = args.repeats or (1 if args.quick else 3)
    workload = Workload(conversations, agents=3, rounds=3)
    result = run(workload, repeats=repeats)
    print(f"framework CPU per call, sim backend; {machine()}")
    print(f"workload: {workload.describe()}; lowest of {repeats} runs each")
    print(
        table(
            ["configuration", "calls", "wall s", "CPU s", "CPU ms/call"],
            [(n, m.calls, m.wall_s, m.cpu_s, m.cpu_ms_per_call) for n, m in result.rows],
        )
    )
    full = result.full.cpu_ms_per_call
    verdict = "meets" if full < TARGET_MS else "misses"
    print(f"full runner: {full:.3f} ms CPU per call ({verdict} the {TARGET_MS:g} ms target)")
    share = result.compact_ms_per_call / full
    verdict = "meets" if share <= COMPACT_TARGET else "misses"
    print(
        f"of which the store's compact form: {result.compact_ms_per_call:.4f} ms per call, "
        f"{share:.1%} of the runner's CPU ({verdict} the {COMPACT_TARGET:.0%} target)"
    )
    return result


if __name__ == "__main__":
    main()
