"""Replicas behind one model: efficiency over four fake servers, conversation affinity, a replica
killed mid-run, and adaptive (AIMD) in-flight bounds against a server whose capacity drops.

Side by side in one run (every server a subprocess, `python -m backchannel.testing.fake_openai`):

1. four servers of C slots each (latency L) as one endpoint's `base_urls`; efficiency = ideal /
   wall with ideal = max(chain x L, calls x L / 4C); beside it, one server of 4C slots.
   Conversations whose calls went to more than one replica are counted (zero expected).
2. the same run with one of the four SIGKILLed once a third of the conversations are stored:
   the run completes; its exported events (all but latency, the cache flag and the retries in
   meta) equal run 1's.
3. one server of C slots answering 429 once C requests wait; after a third of the ideal time
   its capacity drops to C/4. A fixed bound of 4C against an adaptive one (4 .. 4C): wall time
   against the ideal for that capacity schedule, and the 429s the server sent.
Run: python bench/replicas.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
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

TARGET = 0.95


@dataclass(frozen=True)
class Result:
    wall_s: float
    calls: int
    retries: int
    failures: int
    incomplete: int
    moved: int
    """Conversations whose calls went to more than one replica."""
    events: pd.DataFrame


def experiment(
    directory: Path, workload: Workload, endpoint: dict[str, Any], *, retries: int = 8
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = write_experiment(directory, workload, model="openai/fake", base_url="http://unused/v1")
    data = yaml.safe_load(path.read_text())
    data["endpoints"] = [{"models": "openai/*", **endpoint}]
    data["retry"] = {"max_retries": retries, "base_delay_s": 0.2, "max_delay_s": 2.0}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _without_retries(meta: str) -> str:
    """An event's meta without its transport retries (a rerouted call counts one)."""
    data = json.loads(meta)
    data.pop("retries", None)
    return json.dumps(data, sort_keys=True)


def run(
    path: Path,
    directory: Path,
    *,
    on_stored: Callable[[int], None] | None = None,
    at_start: Callable[[], None] | None = None,
    complete: bool = True,
) -> Result:
    """A whole run through the runner (store and cache); wall time around `execute`."""
    loaded = load_experiment(path)
    the_plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(directory, loaded)
    try:
        client, cache = orchestration.make_client(the_plan, directory, concurrency=None)

        def progress(finished: int, total: int, usage: Any) -> None:
            if on_stored is not None:
                on_stored(finished)

        async def main() -> tuple[dict[str, int], float]:
            try:
                if at_start is not None:
                    at_start()
                started = time.perf_counter()
                counts = await orchestration.execute(
                    the_plan, store, client=client, max_active=1024, on_progress=progress
                )
                return counts, time.perf_counter() - started
            finally:
                await client.aclose()

        counts, wall = asyncio.run(main())
        cache.close()
        tables = store.tables()
    finally:
        store.close()
    if complete and counts["done"] != len(the_plan.specs):
        raise RuntimeError(f"the benchmark run did not complete: {counts}")
    moved = sum(
        len(json.loads(meta).get("replica_calls", {})) > 1 for meta in tables.conversations["meta"]
    )
    usage = client.usage.total()
    events = tables.events[[c for c in tables.events.columns if c not in ("latency_s", "cached")]]
    # Transport facts differ with a killed replica: latency, the cache flag and retries.
    events = events.assign(meta=events["meta"].map(_without_retries))
    incomplete = counts["incomplete"] + counts["failed"]
    return Result(wall, usage.calls, usage.retries, usage.failures, incomplete, moved, events)


def set_capacity(server: FakeServerProcess, slots: int) -> None:
    root = server.base_url.removesuffix("/v1")
    request = urllib.request.Request(
        f"{root}/capacity",
        data=json.dumps({"slots": slots}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10):
        pass


def schedule_ideal(work: float, high: int, low: int, switch_s: float) -> float:
    """Seconds to serve `work` slot-seconds at `high` slots until `switch_s`, `low` after."""
    if work <= high * switch_s:
        return work / high
    return switch_s + (work - high * switch_s) / low


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tiny workload (seconds)")
    args = parser.parse_args(argv)
    if args.quick:
        workload, latency, slots = Workload(12, 2, 1), 0.02, 2
    else:
        workload, latency, slots = Workload(200, 3, 3), 0.2, 8
    replicas = 4
    ideal = workload.ideal_seconds(latency, replicas * slots)
    print(f"# Replicas — {machine()}")
    print(f"workload: {workload.describe()}; L = {latency} s, C = {slots} per server")
    numbers: dict[str, float] = {}
    with temporary_directory() as tmp:
        servers = [FakeServerProcess(latency=latency, slots=slots) for _ in range(replicas)]
        big = FakeServerProcess(latency=latency, slots=replicas * slots)
        for server in [*servers, big]:
            server.__enter__()
        try:
            for server in [*servers, big]:
                warm_up_sdk(server.base_url)
            urls = [s.base_url for s in servers]
            four = {"base_urls": urls, "max_in_flight": 4 * slots}
            one = {"base_url": big.base_url, "max_in_flight": 4 * replicas * slots}
            clean = run(experiment(tmp / "a", workload, four), tmp / "run-four")
            single = run(experiment(tmp / "b", workload, one), tmp / "run-one")
            per_server = [s.stats()["requests_served"] for s in servers]

            stored_at_kill: list[int] = []

            def kill_a_third(finished: int) -> None:
                if not stored_at_kill and finished >= workload.conversations // 3:
                    stored_at_kill.append(finished)
                    servers[0].kill()

            killed = run(
                experiment(tmp / "c", workload, four), tmp / "run-killed", on_stored=kill_a_third
            )
        finally:
            for server in [*servers, big]:
                server.__exit__()
    if clean.calls != workload.calls or single.calls != workload.calls:
        raise RuntimeError("the runs did not make the workload's calls")
    same = killed.events.reset_index(drop=True).equals(clean.events.reset_index(drop=True))
    if not same:
        raise RuntimeError("the run with a killed replica stored different events")
    rows = [
        [
            "4 servers x C, base_urls",
            clean.calls,
            f"{clean.wall_s:.2f}",
            f"{ideal:.2f}",
            f"{ideal / clean.wall_s:.3f}",
            clean.moved,
        ],
        [
            "1 server x 4C, base_url",
            single.calls,
            f"{single.wall_s:.2f}",
            f"{ideal:.2f}",
            f"{ideal / single.wall_s:.3f}",
            "-",
        ],
        [
            "4 servers, one killed at 1/3",
            killed.calls,
            f"{killed.wall_s:.2f}",
            f"{ideal:.2f}",
            f"{ideal / killed.wall_s:.3f}",
            killed.moved,
        ],
    ]
    print()
    print(
        table(
            ["run", "calls", "wall s", "ideal s", "efficiency", "conversations on >1 replica"],
            rows,
        )
    )
    print()
    print(f"calls served per replica (clean run): {per_server}")
    print(
        f"killed run: replica 0 killed after {stored_at_kill[0]} stored conversations; "
        f"{killed.retries} retries; exported events equal the clean run's: {same}"
    )
    efficiency = ideal / clean.wall_s
    verdict = "meets" if efficiency >= TARGET else "misses"
    print(f"efficiency over the total capacity {efficiency:.3f}: {verdict} the {TARGET} target")
    numbers.update(
        efficiency=efficiency,
        single_efficiency=ideal / single.wall_s,
        killed_efficiency=ideal / killed.wall_s,
        moved_clean=clean.moved,
        moved_killed=killed.moved,
    )
    if args.quick:
        numbers.update(adaptive(Workload(12, 2, 1), 0.02, 2))
    else:
        numbers.update(adaptive(Workload(60, 3, 3), 0.05, 8))
    return numbers


def adaptive(workload: Workload, latency: float, slots: int) -> dict[str, float]:
    """Part 3: a fixed against an adaptive bound while the server's capacity drops."""
    high, low = 2 * slots, max(1, slots // 2)
    work = workload.calls * latency
    switch = work / high / 3
    ideal = schedule_ideal(work, high, low, switch)
    rows = []
    numbers: dict[str, float] = {}
    with temporary_directory() as tmp:
        endpoint: dict[str, Any]
        for name, endpoint in (
            ("fixed max_in_flight 4C", {"max_in_flight": 4 * high}),
            (
                "adaptive 4..4C",
                {"max_in_flight": 4 * high, "adaptive_in_flight": True, "min_in_flight": 4},
            ),
        ):
            queue = ["--max-queue", str(high)]
            server = FakeServerProcess(latency=latency, slots=high, extra=queue)
            with server:
                warm_up_sdk(server.base_url)
                timer = threading.Timer(switch, set_capacity, (server, low))
                settings = {"base_url": server.base_url, **endpoint}
                path = experiment(tmp / name[:5], workload, settings)
                result = run(path, tmp / f"run-{name[:5]}", at_start=timer.start, complete=False)
                timer.join()
                limited = server.stats()["rate_limited"]
            rows.append(
                [
                    name,
                    result.calls,
                    f"{result.wall_s:.2f}",
                    f"{ideal:.2f}",
                    f"{ideal / result.wall_s:.3f}",
                    limited,
                    result.retries,
                    result.failures,
                    result.incomplete,
                ]
            )
            key = "adaptive" if "adaptive" in name else "fixed"
            numbers[f"{key}_efficiency"] = ideal / result.wall_s
            numbers[f"{key}_429"] = limited
    print()
    print(
        f"adaptive bounds: one server, {high} slots, 429 once {high} requests wait; capacity "
        f"drops to {low} slots after {switch:.2f} s; ideal for that schedule {ideal:.2f} s"
    )
    print()
    print(
        table(
            [
                "bound",
                "calls",
                "wall s",
                "ideal s",
                "efficiency",
                "429s sent",
                "retries",
                "calls failed after retries",
                "incomplete conversations",
            ],
            rows,
        )
    )
    return numbers


if __name__ == "__main__":
    main()
