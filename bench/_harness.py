"""Shared pieces of the benchmarks: discussion workloads, the fake server as a subprocess, a run
through the real runner, bare-SDK baselines with the same call pattern, and table printing.

The bare baselines replay the discussion protocol's dependency shape: the turns of one
conversation run one after another; at every checkpoint (before round 1 and after each round)
each agent is probed off the critical path; a conversation ends when its last probe returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from backchannel import orchestration
from backchannel.backends import LLMClient, RawCompletion, Request, Route
from backchannel.experiment import load_experiment
from backchannel.seeding import derive_seed

QUESTION = "What is the capital city of Australia?"


@dataclass(frozen=True)
class Workload:
    """A discussion design: `conversations` x (`agents` turns per round for `rounds` rounds)."""

    conversations: int
    agents: int
    rounds: int
    max_tokens: int = 32
    probe_max_tokens: int = 8

    def __post_init__(self) -> None:
        if min(self.conversations, self.agents, self.rounds) < 1:
            raise ValueError("conversations, agents and rounds must be at least 1")

    @property
    def turns(self) -> int:
        return self.agents * self.rounds

    @property
    def probes(self) -> int:
        return self.agents * (self.rounds + 1)

    @property
    def calls_per_conversation(self) -> int:
        return self.turns + self.probes

    @property
    def calls(self) -> int:
        return self.conversations * self.calls_per_conversation

    @property
    def chain(self) -> int:
        """Dependent calls in one conversation: every turn, then the last checkpoint's probe."""
        return self.turns + 1

    def ideal_seconds(self, latency: float, slots: int) -> float:
        """The model-bound wall time: max(chain x L, total calls x L / C)."""
        return max(self.chain * latency, self.calls * latency / slots)

    def describe(self) -> str:
        return (
            f"{self.conversations} conversations x {self.agents} agents x {self.rounds} rounds "
            f"= {self.calls} calls ({self.calls_per_conversation} per conversation, "
            f"chain {self.chain})"
        )


def write_experiment(
    directory: Path,
    workload: Workload,
    *,
    model: str,
    base_url: str | None = None,
    max_in_flight: int = 64,
    local_parallel: int | None = None,
) -> Path:
    """An experiment file for `workload`: one question, one replicate per conversation."""
    data: dict[str, Any] = {
        "name": "bench",
        "paradigm": "discussion",
        "seed": 1,
        "replicates": workload.conversations,
        "settings": {
            "model": model,
            "agents": workload.agents,
            "rounds": workload.rounds,
            "memory_rounds": max(1, workload.rounds),
            "order": "fixed",
            "max_tokens": workload.max_tokens,
            "probe_max_tokens": workload.probe_max_tokens,
            "questions": [{"id": "q1", "question": QUESTION}],
        },
        "retry": {"max_retries": 0},
    }
    if base_url is not None:
        data["endpoints"] = [
            {"models": "openai/*", "base_url": base_url, "max_in_flight": max_in_flight}
        ]
    if local_parallel is not None:
        data["local"] = {"parallel": local_parallel}
    path = directory / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Measured:
    """Wall and CPU seconds of one measured piece of work, and the calls it made."""

    wall_s: float
    cpu_s: float
    calls: int

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000.0 * self.cpu_s / self.calls if self.calls else float("nan")


def run_backchannel(
    experiment: Path,
    run_directory: Path,
    *,
    concurrency: int | None,
    wrap_client: Callable[[LLMClient], LLMClient] | None = None,
    prepare: Callable[[LLMClient], Awaitable[None]] | None = None,
) -> Measured:
    """Plan and execute a run with the real runner (store and cache included); time execute.

    `wrap_client` may put a recording layer around the run's client before it is used;
    `prepare` runs on the same event loop before the clock starts (e.g. to load a model).
    """
    loaded = load_experiment(experiment)
    run_plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(run_directory, loaded)
    try:
        client, cache = orchestration.make_client(run_plan, run_directory, concurrency=concurrency)
        if wrap_client is not None:
            client = wrap_client(client)
        max_active = max(16, 4 * (concurrency or 64))

        async def main() -> tuple[dict[str, int], float, float, int]:
            try:
                if prepare is not None:
                    await prepare(client)
                calls_before = client.usage.total().calls
                wall, cpu = time.perf_counter(), time.process_time()
                counts = await orchestration.execute(
                    run_plan, store, client=client, max_active=max_active
                )
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                return counts, wall, cpu, calls_before
            finally:
                await client.aclose()

        counts, wall, cpu, calls_before = asyncio.run(main())
        cache.close()
    finally:
        store.close()
    if counts["failed"] or counts["incomplete"]:
        raise RuntimeError(f"conversations not completed in the benchmark run: {counts}")
    usage = client.usage.total()
    if usage.failures or usage.parse_failures:
        raise RuntimeError(f"calls failed in the benchmark run: {usage}")
    return Measured(wall, cpu, usage.calls - calls_before)


@contextmanager
def temporary_directory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="backchannel-bench-") as name:
        yield Path(name)


class FakeServerProcess:
    """`python -m backchannel.testing.fake_openai` in its own process (not this event loop)."""

    def __init__(self, *, latency: float, slots: int, extra: Sequence[str] = ()) -> None:
        self.latency = latency
        self.slots = slots
        self.extra = tuple(extra)
        self._process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> FakeServerProcess:
        command = [
            sys.executable,
            "-m",
            "backchannel.testing.fake_openai",
            "--port",
            "0",
            "--latency",
            str(self.latency),
            "--slots",
            str(self.slots),
            "--model",
            "fake",
            *self.extra,
        ]
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http"):
            self._process.kill()
            raise RuntimeError(f"the fake server did not start (first line: {line!r})")
        self.base_url = line
        return self

    def stats(self) -> dict[str, int]:
        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/stats", timeout=10) as response:
            data: dict[str, int] = json.load(response)
        return data

    def kill(self) -> None:
        """SIGKILL the server (a crashed replica): its connections drop, its port refuses."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


def warm_up_sdk(base_url: str, calls: int = 3) -> None:
    """A few untimed SDK calls, so lazy imports and first-use setup are not billed to anyone."""

    async def go() -> None:
        import openai

        client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
        try:
            for _ in range(calls):
                await client.chat.completions.create(
                    model="fake", messages=[{"role": "user", "content": "warm up"}], max_tokens=4
                )
        finally:
            await client.close()

    asyncio.run(go())


# --- bare baselines: the same call pattern with nothing but the openai SDK ----------------------

Call = Callable[[int, list[dict[str, str]]], Awaitable[str]]


def _messages(prefix: str, history: Sequence[str], instruction: str) -> list[dict[str, str]]:
    parts = [f"The group is discussing this question: {QUESTION}"]
    if history:
        parts.append("Conversation so far:\n\n" + "\n\n".join(history))
    parts.append(instruction)
    return [
        {"role": "system", "content": f"You are {prefix}, taking part in a group discussion."},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def sdk_call(client: Any, model: str, semaphore: asyncio.Semaphore | None = None) -> Call:
    """One chat completion through `client` (an AsyncOpenAI), optionally under a semaphore."""

    async def call(max_tokens: int, messages: list[dict[str, str]]) -> str:
        async def once() -> str:
            response = await client.chat.completions.create(
                model=model, messages=messages, max_tokens=max_tokens, temperature=0.7
            )
            return str(response.choices[0].message.content or "")

        if semaphore is None:
            return await once()
        async with semaphore:
            return await once()

    return call


async def bare_conversation(call: Call, workload: Workload) -> int:
    """One discussion conversation on a bare call function; returns the calls made."""
    names = [f"agent{i}" for i in range(workload.agents)]
    history: list[str] = []
    probes: list[asyncio.Task[str]] = []
    probe = "What is your own answer? Reply with the answer only."

    def checkpoint() -> None:
        for name in names:
            messages = _messages(name, history, probe)
            probes.append(asyncio.ensure_future(call(workload.probe_max_tokens, messages)))

    checkpoint()
    for round_number in range(1, workload.rounds + 1):
        for name in names:
            messages = _messages(name, history, f"It is your turn (round {round_number}).")
            text = await call(workload.max_tokens, messages)
            history.append(f"{name}: {text}")
        checkpoint()
    await asyncio.gather(*probes)
    return workload.turns + len(probes)


async def bare_concurrent(call: Call, workload: Workload) -> int:
    """Every conversation at once (the semaphore, if any, lives in `call`)."""
    done = await asyncio.gather(
        *(bare_conversation(call, workload) for _ in range(workload.conversations))
    )
    return sum(done)


async def bare_sequential(call: Call, workload: Workload) -> int:
    """One call at a time: every call of every conversation in order, probes awaited at once."""

    calls = 0
    for _ in range(workload.conversations):
        names = [f"agent{i}" for i in range(workload.agents)]
        history: list[str] = []
        probe = "What is your own answer? Reply with the answer only."
        for name in names:
            await call(workload.probe_max_tokens, _messages(name, history, probe))
            calls += 1
        for round_number in range(1, workload.rounds + 1):
            for name in names:
                instruction = f"It is your turn (round {round_number})."
                text = await call(workload.max_tokens, _messages(name, history, instruction))
                history.append(f"{name}: {text}")
                calls += 1
            for name in names:
                await call(workload.probe_max_tokens, _messages(name, history, probe))
                calls += 1
    return calls


# --- replay: exactly the requests backchannel sent, in the discussion's dependency shape ---------


@dataclass(frozen=True)
class SentCall:
    """One call as backchannel sent it: its place in its conversation and the SDK arguments.

    `critical` calls are turns (awaited in order); the others are probes (run beside the turns).
    """

    seq: int
    critical: bool
    arguments: dict[str, Any]


class _Recorder:
    """Passes requests through to `inner` and keeps each one."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.requests: list[Request] = []

    @property
    def endpoint(self) -> str:
        return str(self._inner.endpoint)

    async def generate(self, request: Request) -> RawCompletion:
        self.requests.append(request)
        completion: RawCompletion = await self._inner.generate(request)
        return completion

    async def aclose(self) -> None:
        await self._inner.aclose()


def record_calls(experiment: Path, run_directory: Path, model: str) -> list[list[SentCall]]:
    """Run `experiment` (on one `model`) and return each conversation's calls in event order.

    A call is assigned to its conversation by its seed, which the engine derives from the
    conversation's seed and the call's event sequence number; the SDK arguments are those
    `OpenAIBackend` passes (messages, temperature, top_p, max_tokens, seed).
    """
    loaded = load_experiment(experiment)
    specs = orchestration.plan(loaded).specs
    recorders: list[_Recorder] = []

    def wrap(client: LLMClient) -> LLMClient:
        recorder = _Recorder(client.route(model).backend)
        recorders.append(recorder)
        return LLMClient({model: Route(recorder)})

    run_backchannel(experiment, run_directory, concurrency=None, wrap_client=wrap)
    (recorder,) = recorders
    seeds: dict[int, tuple[int, int]] = {}
    for index, spec in enumerate(specs):
        for seq in range(4 * len(recorder.requests) // len(specs) + 8):
            seeds[derive_seed(spec.seed, seq)] = (index, seq)
    conversations: list[list[SentCall]] = [[] for _ in specs]
    for request in recorder.requests:
        if request.seed not in seeds or request.constraint is not None or request.attempt:
            raise RuntimeError("a recorded call is not a plain first attempt of a conversation")
        index, seq = seeds[request.seed]
        arguments = {
            "model": request.model.split("/", 1)[1],
            "messages": [m.as_dict() for m in request.messages],
            "temperature": request.settings.temperature,
            "top_p": request.settings.top_p,
            "max_tokens": request.settings.max_tokens,
            "seed": request.seed,
        }
        conversations[index].append(SentCall(seq, request.critical, arguments))
    for calls in conversations:
        calls.sort(key=lambda call: call.seq)
    return conversations


# What `chat.completions.create` asks of the SDK's request machinery (bearer-token auth only).
_POST_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}


def _post_body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON body `create(**arguments)` sends, keys in the order it writes them."""
    keys = ("model", "messages", "max_tokens", "seed", "temperature", "top_p")
    return {key: arguments[key] for key in keys if key in arguments}


async def replay_conversation(
    client: Any,
    calls: Sequence[SentCall],
    semaphore: asyncio.Semaphore | None = None,
    *,
    post: bool = False,
) -> int:
    """Send one conversation's recorded calls with the bare SDK: turns one after another, each
    probe as a task started where the engine started it; returns the calls made.

    `post` sends each call with the SDK's generic `client.post` (the body `create` would send,
    decoded JSON back) instead of `chat.completions.create`.
    """

    async def once(arguments: dict[str, Any]) -> str:
        if post:
            data = await client.post(
                "/chat/completions",
                body=_post_body(arguments),
                cast_to=object,
                options=_POST_OPTIONS,
            )
            return str(data["choices"][0]["message"]["content"] or "")
        response = await client.chat.completions.create(**arguments)
        return str(response.choices[0].message.content or "")

    async def send(arguments: dict[str, Any]) -> str:
        if semaphore is None:
            return await once(arguments)
        async with semaphore:
            return await once(arguments)

    probes: list[asyncio.Task[str]] = []
    for call in calls:
        if call.critical:
            await send(call.arguments)
        else:
            probes.append(asyncio.ensure_future(send(call.arguments)))
    await asyncio.gather(*probes)
    return len(calls)


async def replay_concurrent(
    client: Any,
    conversations: Sequence[Sequence[SentCall]],
    semaphore: asyncio.Semaphore | None = None,
    *,
    post: bool = False,
) -> int:
    """Every recorded conversation at once on one AsyncOpenAI client."""
    done = await asyncio.gather(
        *(replay_conversation(client, calls, semaphore, post=post) for calls in conversations)
    )
    return sum(done)


def measure(coroutine_factory: Callable[[], Awaitable[int]]) -> Measured:
    """Run a coroutine on a fresh event loop; wall and CPU seconds and its call count."""
    wall, cpu = time.perf_counter(), time.process_time()
    calls = asyncio.run(_awaited(coroutine_factory))
    return Measured(time.perf_counter() - wall, time.process_time() - cpu, calls)


async def _awaited(factory: Callable[[], Awaitable[int]]) -> int:
    return await factory()


# --- reporting ---------------------------------------------------------------------------------


def machine() -> str:
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain Markdown table (pasted as is into RESULTS.md)."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
        return str(value)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
