"""(d) The embedded model: conversation calls per second through backchannel against raw
concurrent requests to the same kind of llama.cpp server.

Backchannel runs a discussion workload on `local/smollm2` through the real runner, and records
every request it sends. The baseline then starts a llama.cpp server the same way
(`LocalBackend(...).start()`, same slots and threads) and sends exactly those requests (same
messages, max_tokens, temperature, top_p and seed) with the bare `openai` SDK, with no
dependencies between calls: once all at once, and once (on another fresh server) with at most
as many in flight as the server has slots. Sending all at once is not the server's best: the
queued requests reuse less of the slots' prompt cache (llama.cpp reports more prompt tokens
evaluated), so the ratio is taken against the faster of the two raw runs. Run:
python bench/local_model.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

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

from backchannel.backends import (
    GenerationSettings,
    LLMClient,
    Message,
    RawCompletion,
    Request,
    Route,
)
from backchannel.backends._local import LocalBackend, resolve_model_path

TARGET = 0.9
MODEL = "local/smollm2"


class Recorder:
    """Passes requests through to `inner` and keeps each one, for the raw replay."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.requests: list[Request] = []
        self.completion_tokens = 0

    @property
    def endpoint(self) -> str:
        return str(self._inner.endpoint)

    async def generate(self, request: Request) -> RawCompletion:
        self.requests.append(request)
        completion: RawCompletion = await self._inner.generate(request)
        self.completion_tokens += completion.completion_tokens
        return completion

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass(frozen=True)
class Side:
    """One side's run: wall/CPU seconds, calls and the completion tokens it generated."""

    measured: Measured
    completion_tokens: int

    @property
    def calls_per_s(self) -> float:
        return self.measured.calls / self.measured.wall_s

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.measured.wall_s


@dataclass(frozen=True)
class Result:
    workload: Workload
    parallel: int
    backchannel: Side
    raw: Side
    """The same requests all at once."""
    raw_bounded: Side
    """The same requests, at most `parallel` in flight."""

    @property
    def best_raw(self) -> Side:
        return max(self.raw, self.raw_bounded, key=lambda side: side.calls_per_s)

    @property
    def ratio(self) -> float:
        """Backchannel's calls per second over the faster raw run's."""
        return self.backchannel.calls_per_s / self.best_raw.calls_per_s

    @property
    def ratio_all_at_once(self) -> float:
        return self.backchannel.calls_per_s / self.raw.calls_per_s


WARM_UP = Request(
    model=MODEL,
    messages=(Message("user", "Say hello."),),
    settings=GenerationSettings(temperature=0.0, max_tokens=4),
)


def _backchannel(
    workload: Workload, parallel: int, root: Path, concurrency: int | None
) -> tuple[Side, list[Request]]:
    """The measured run; the model is loaded (by one warm-up call) before the clock starts."""
    experiment = write_experiment(root, workload, model=MODEL, local_parallel=parallel)
    recorders: list[Recorder] = []

    def wrap(client: LLMClient) -> LLMClient:
        recorder = Recorder(client.route(MODEL).backend)
        recorders.append(recorder)
        return LLMClient({MODEL: Route(recorder)})

    async def load_model(client: LLMClient) -> None:
        completion = await client.generate(WARM_UP)
        if completion.status != "ok":
            raise RuntimeError(f"the warm-up call failed: {completion.error}")
        recorders[0].requests.clear()
        recorders[0].completion_tokens = 0

    measured = run_backchannel(
        experiment, root / "run", concurrency=concurrency, wrap_client=wrap, prepare=load_model
    )
    (recorder,) = recorders
    return Side(measured, recorder.completion_tokens), recorder.requests


async def _raw_requests(
    base_url: str, requests: list[Request], limit: int | None = None
) -> tuple[int, int]:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    semaphore = asyncio.Semaphore(limit) if limit is not None else None

    async def send(request: Request) -> int:
        response = await client.chat.completions.create(
            model="smollm2",
            messages=[m.as_dict() for m in request.messages],
            max_tokens=request.settings.max_tokens,
            temperature=request.settings.temperature,
            top_p=request.settings.top_p,
            seed=request.seed,
        )
        return response.usage.completion_tokens if response.usage else 0

    async def one(request: Request) -> int:
        if semaphore is None:
            return await send(request)
        async with semaphore:
            return await send(request)

    try:
        tokens = await asyncio.gather(*(one(r) for r in requests))
    finally:
        await client.close()
    return len(tokens), sum(tokens)


def _raw(requests: list[Request], parallel: int, limit: int | None) -> Side:
    """Start a fresh server (empty prompt cache, as backchannel's was), make one warm-up call,
    then time the replay of `requests` with at most `limit` in flight (None: all at once)."""
    backend = LocalBackend(resolve_model_path("smollm2"), parallel=parallel)
    base_url = backend.start()
    try:
        asyncio.run(_raw_requests(base_url, [WARM_UP]))
        wall, cpu = time.perf_counter(), time.process_time()
        calls, tokens = asyncio.run(_raw_requests(base_url, requests, limit))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        asyncio.run(backend.aclose())
    return Side(Measured(wall, cpu, calls), tokens)


def run(workload: Workload, *, parallel: int = 4, concurrency: int | None = None) -> Result:
    """Backchannel first, then the raw replays of the requests it sent (each after a warm-up)."""
    with temporary_directory() as root:
        side, requests = _backchannel(workload, parallel, root, concurrency)
    if len(requests) != workload.calls:
        raise RuntimeError(f"backchannel sent {len(requests)} requests, expected {workload.calls}")
    raw = _raw(requests, parallel, None)
    raw_bounded = _raw(requests, parallel, parallel)
    for name, measured in (("all at once", raw), ("bounded", raw_bounded)):
        if measured.measured.calls != workload.calls:
            raise RuntimeError(f"raw {name}: {measured.measured.calls} calls")
    return Result(workload, parallel, side, raw, raw_bounded)


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny workload (seconds)")
    parser.add_argument("--parallel", type=int, default=4, help="llama.cpp slots")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="backchannel's in-flight calls (default: the local backend's, = the slots)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        workload = Workload(1, 1, 1, max_tokens=2, probe_max_tokens=2)
    else:
        workload = Workload(8, 2, 2, max_tokens=16, probe_max_tokens=8)
    result = run(workload, parallel=args.parallel, concurrency=args.concurrency)
    in_flight = args.concurrency or args.parallel
    print(
        f"embedded model ({MODEL}), {args.parallel} llama.cpp slots, backchannel "
        f"max_in_flight {in_flight}; {machine()}"
    )
    print(
        f"workload: {workload.describe()}; max_tokens {workload.max_tokens} per turn, "
        f"{workload.probe_max_tokens} per probe"
    )
    rows = [
        ("backchannel discussion run", result.backchannel),
        ("raw: same requests at once, bare SDK", result.raw),
        (f"raw: same requests, {args.parallel} in flight (= slots), bare SDK", result.raw_bounded),
    ]
    print(
        table(
            ["client", "calls", "wall s", "calls/s", "completion tokens", "tokens/s"],
            [
                (
                    n,
                    s.measured.calls,
                    s.measured.wall_s,
                    s.calls_per_s,
                    s.completion_tokens,
                    s.tokens_per_s,
                )
                for n, s in rows
            ],
        )
    )
    verdict = "meets" if result.ratio >= TARGET else "misses"
    print(
        f"ratio backchannel / faster raw run, calls per second: {result.ratio:.3f} "
        f"({verdict} {TARGET}); against the all-at-once run: {result.ratio_all_at_once:.3f}"
    )
    return result


if __name__ == "__main__":
    main()
