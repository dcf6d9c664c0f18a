"""The Ray executor against the asyncio executor on this machine, side by side in one run.

A discussion design of 2,000 conversations (2 agents, 1 round: 6 calls each) against one fake
server (subprocess; C slots, latency L), run once with `executor="asyncio"` and once on a local
Ray instance (2 workers, started before the clock; the workers' start is inside it). Reported for
each: efficiency = ideal / wall, ideal = max(chain x L, calls x L / C), and the driver's CPU per
call (`time.process_time` of this process: for Ray, what the driver spends shipping tasks and
writing the store and the cache; the workers' CPU is their own). The two runs' exported events
(all but latency and the cache flag) must be equal.
Run: python bench/ray_executor.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    FakeServerProcess,
    Workload,
    machine,
    table,
    temporary_directory,
    warm_up_sdk,
    write_experiment,
)

from backchannel import orchestration
from backchannel.experiment import load_experiment
from backchannel.store import RunStore

WORKERS = 2


def run(path: Path, directory: Path, executor: str) -> tuple[float, float, int]:
    """(wall s, driver CPU s, calls) of one whole run."""
    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(directory, loaded)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = asyncio.run(orchestration.run_plan(the_plan, store, directory, executor=executor))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        store.close()
    if outcome.counts["done"] != len(the_plan.specs) or outcome.usage.failures:
        raise RuntimeError(f"the {executor} run did not complete: {outcome.counts}")
    return wall, cpu, outcome.usage.calls


def events(directory: Path) -> object:
    store = RunStore(directory)
    try:
        frame = store.tables().events
    finally:
        store.close()
    return frame[[c for c in frame.columns if c not in ("latency_s", "cached")]]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tiny workload (seconds)")
    args = parser.parse_args(argv)
    import ray

    if args.quick:
        workload, latency, slots, in_flight = Workload(20, 2, 1), 0.02, 4, 8
    else:
        workload, latency, slots, in_flight = Workload(2000, 2, 1), 0.1, 64, 128
    ideal = workload.ideal_seconds(latency, slots)
    print(f"# Ray executor — {machine()}")
    print(
        f"workload: {workload.describe()}; L = {latency} s, C = {slots}; max_in_flight "
        f"{in_flight} (across the cluster for Ray: {in_flight // WORKERS} per worker)"
    )
    rows = []
    numbers: dict[str, float] = {}
    with temporary_directory() as tmp, FakeServerProcess(latency=latency, slots=slots) as server:
        warm_up_sdk(server.base_url)
        path = write_experiment(
            tmp, workload, model="openai/fake", base_url=server.base_url, max_in_flight=in_flight
        )
        data = yaml.safe_load(path.read_text())
        data["retry"] = {"max_retries": 4}
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        ray.init(
            num_cpus=WORKERS,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
        )
        try:
            measured = {}
            for executor in ("asyncio", "ray"):
                measured[executor] = run(path, tmp / executor, executor)
        finally:
            ray.shutdown()
        same = events(tmp / "asyncio").equals(events(tmp / "ray"))  # type: ignore[attr-defined]
        served = server.stats()["requests_served"]
    if not same:
        raise RuntimeError("the Ray run stored different events from the asyncio run")
    if served < 2 * workload.calls:
        raise RuntimeError(f"the server served {served} calls, fewer than the two runs made")
    for executor, (wall, cpu, calls) in measured.items():
        label = "asyncio (one process)" if executor == "asyncio" else f"Ray, {WORKERS} workers"
        efficiency = ideal / wall
        rows.append(
            [
                label,
                calls,
                f"{wall:.2f}",
                f"{ideal:.2f}",
                f"{efficiency:.3f}",
                f"{1000 * cpu / calls:.3f}",
            ]
        )
        numbers[f"{executor}_efficiency"] = efficiency
        numbers[f"{executor}_driver_cpu_ms"] = 1000 * cpu / calls
    print()
    print(
        table(["executor", "calls", "wall s", "ideal s", "efficiency", "driver CPU ms/call"], rows)
    )
    print()
    print(f"exported events equal: {same}")
    return numbers


if __name__ == "__main__":
    main()
