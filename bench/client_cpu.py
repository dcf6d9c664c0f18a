"""(c) Client CPU per call over HTTP: backchannel's runner against the bare `openai` SDK.

A zero-latency fake server runs in a subprocess, so this process's CPU time (time.process_time)
is the client's alone. Both sides make the same discussion call pattern, all conversations at
once; backchannel goes through the real runner (engine, cache, store), the baseline through one
`AsyncOpenAI` client sending exactly the requests backchannel sent (recorded in an untimed run:
same messages, temperature, top_p, max_tokens and seed, so the fake server's answers are the
same too). The ratio compares backchannel with the bare SDK as it is usually called
(`chat.completions.create` on the default httpx transport). Two more SDK rows split that
difference: `create` on the SDK's aiohttp transport, and the SDK's generic `post` of the same
body on the aiohttp transport (how backchannel's OpenAI backend sends a call), so backchannel's
row minus the last is what the framework itself (engine, scheduler, cache, store) costs.
Run: python bench/client_cpu.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    FakeServerProcess,
    Measured,
    SentCall,
    Workload,
    machine,
    measure,
    record_calls,
    replay_concurrent,
    run_backchannel,
    table,
    temporary_directory,
    warm_up_sdk,
    write_experiment,
)

IN_FLIGHT = 64
MODEL = "openai/fake"


@dataclass(frozen=True)
class Result:
    """CPU per call of each side over `repeats` alternating runs (the best run of each)."""

    workload: Workload
    backchannel: Measured
    sdk_limited: Measured
    sdk_unlimited: Measured
    sdk_aiohttp: Measured
    """`create` on the SDK's aiohttp transport, 64 in flight."""
    sdk_aiohttp_post: Measured
    """The SDK's `post` of the same body on the aiohttp transport, 64 in flight."""

    @property
    def sdk(self) -> Measured:
        """The cheaper of the two SDK baselines (the stricter comparison)."""
        return min(self.sdk_limited, self.sdk_unlimited, key=lambda m: m.cpu_ms_per_call)

    @property
    def ratio(self) -> float:
        return self.backchannel.cpu_ms_per_call / self.sdk.cpu_ms_per_call


def _sdk_run(
    base_url: str,
    calls: list[list[SentCall]],
    limit: int | None,
    *,
    aiohttp: bool = False,
    post: bool = False,
) -> Measured:
    async def go() -> int:
        client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key="not-needed",
            max_retries=0,
            http_client=openai.DefaultAioHttpClient() if aiohttp else None,
        )
        semaphore = asyncio.Semaphore(limit) if limit is not None else None
        try:
            return await replay_concurrent(client, calls, semaphore, post=post)
        finally:
            await client.close()

    return measure(go)


def _lower(best: Measured | None, new: Measured) -> Measured:
    return new if best is None or new.cpu_ms_per_call < best.cpu_ms_per_call else best


def run(workload: Workload, *, repeats: int = 2) -> Result:
    """Alternate backchannel and SDK runs against one server; keep each side's lowest CPU/call.

    An untimed backchannel run first records the calls the SDK side replays. Backchannel runs
    with 64 calls in flight; the SDK's `create` on httpx both under a semaphore of 64 and
    unlimited, then `create` and `post` on the aiohttp transport under a semaphore of 64.
    """
    best: dict[str, Measured | None] = {
        "bc": None,
        "limited": None,
        "unlimited": None,
        "aiohttp": None,
        "aiohttp_post": None,
    }
    with FakeServerProcess(latency=0.0, slots=64) as server, temporary_directory() as root:
        warm_up_sdk(server.base_url)
        recorded = write_experiment(root, workload, model=MODEL, base_url=server.base_url)
        calls = record_calls(recorded, root / "recorded", MODEL)
        if sum(len(c) for c in calls) != workload.calls:
            raise RuntimeError("the recorded run did not make the workload's calls")
        for repeat in range(repeats):
            directory = root / f"r{repeat}"
            directory.mkdir()
            experiment = write_experiment(
                directory, workload, model=MODEL, base_url=server.base_url
            )
            bc = run_backchannel(experiment, directory / "run", concurrency=IN_FLIGHT)
            best["bc"] = _lower(best["bc"], bc)
            limited = _sdk_run(server.base_url, calls, IN_FLIGHT)
            best["limited"] = _lower(best["limited"], limited)
            unlimited = _sdk_run(server.base_url, calls, None)
            best["unlimited"] = _lower(best["unlimited"], unlimited)
            on_aiohttp = _sdk_run(server.base_url, calls, IN_FLIGHT, aiohttp=True)
            best["aiohttp"] = _lower(best["aiohttp"], on_aiohttp)
            posted = _sdk_run(server.base_url, calls, IN_FLIGHT, aiohttp=True, post=True)
            best["aiohttp_post"] = _lower(best["aiohttp_post"], posted)
    kept = [best[key] for key in ("bc", "limited", "unlimited", "aiohttp", "aiohttp_post")]
    measured = [m for m in kept if m is not None]
    assert len(measured) == len(kept)
    for m in measured:
        if m.calls != workload.calls:
            raise RuntimeError(f"a side made {m.calls} calls, expected {workload.calls}")
    return Result(workload, *measured)


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds)")
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    conversations = args.conversations or (4 if args.quick else 60)
    repeats = args.repeats or (1 if args.quick else 3)
    workload = Workload(conversations, agents=3, rounds=3)
    result = run(workload, repeats=repeats)
    print(f"client CPU per call, zero-latency fake server (subprocess); {machine()}")
    print(f"workload: {workload.describe()}; best of {repeats} alternating runs each")
    rows = [
        (f"backchannel (runner, cache, store), {IN_FLIGHT} in flight", result.backchannel),
        (f"bare openai SDK, same requests, {IN_FLIGHT} in flight", result.sdk_limited),
        ("bare openai SDK, same requests, no limit", result.sdk_unlimited),
        (
            f"bare SDK create() on its aiohttp transport, {IN_FLIGHT} in flight",
            result.sdk_aiohttp,
        ),
        (
            f"bare SDK post() of the same body on aiohttp, {IN_FLIGHT} in flight",
            result.sdk_aiohttp_post,
        ),
    ]
    print(
        table(
            ["client", "calls", "wall s", "CPU s", "CPU ms/call"],
            [(name, m.calls, m.wall_s, m.cpu_s, m.cpu_ms_per_call) for name, m in rows],
        )
    )
    print(
        "ratio backchannel / SDK CPU per call (the cheaper create() row on the default "
        f"transport): {result.ratio:.2f}"
    )
    framework = result.backchannel.cpu_ms_per_call - result.sdk_aiohttp_post.cpu_ms_per_call
    print(f"backchannel minus the bare post() on aiohttp: {framework:+.3f} ms per call")
    return result


if __name__ == "__main__":
    main()
