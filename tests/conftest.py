"""Shared fixtures: experiment files on disk, the CLI runner, a fake server in its own thread,
and Debian's Chromium for the browser tests."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from backchannel.testing import CHROMIUM, CHROMIUM_ARGS, FakeOpenAIServer

WriteExperiment = Callable[..., Path]

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)"),
]
"""A browser test's marks: CI runs them; without Chromium they are skipped with the fix."""


@contextmanager
def chromium_context(profile: Path, **options: Any) -> Iterator[Any]:
    """A headless Chromium context on its own profile folder, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=list(CHROMIUM_ARGS),
            headless=True,
            **options,
        )
        try:
            yield context
        finally:
            context.close()


def discussion_experiment(**overrides: Any) -> dict[str, Any]:
    """A tiny discussion experiment on the built-in sim: 2 questions, 2 agents, 2 rounds."""
    data: dict[str, Any] = {
        "name": "tiny",
        "paradigm": "discussion",
        "seed": 11,
        "factors": {"model": ["sim"]},
        "settings": {
            "agents": 2,
            "rounds": 2,
            "questions": [
                {"id": "q1", "question": "What is the capital of Australia?"},
                {"id": "q2", "question": "Which planet is the largest?"},
            ],
        },
    }
    data.update(overrides)
    return data


@pytest.fixture
def write_experiment(tmp_path: Path) -> WriteExperiment:
    """Write an experiment mapping (or raw YAML text) to a file and return its path."""

    def write(data: dict[str, Any] | str | None = None, name: str = "experiment.yaml") -> Path:
        path = tmp_path / name
        if data is None:
            data = discussion_experiment()
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write


def invoke(*args: str | Path, env: Mapping[str, str | None] | None = None) -> Result:
    """Run the `backchannel` command in-process."""
    from backchannel.cli import app

    return CliRunner(env=env).invoke(app, [str(a) for a in args])


class ThreadedServer:
    """A FakeOpenAIServer serving from its own event loop in a thread, for synchronous callers
    (the CLI runs its own `asyncio.run`)."""

    def __init__(self, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.server = FakeOpenAIServer(**options)
        self._call(self.server.start())

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=30)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def stop(self) -> None:
        self._call(self.server.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


@pytest.fixture
def threaded_server() -> Iterator[Callable[..., ThreadedServer]]:
    """A factory of fake servers in threads; every one started is stopped after the test."""
    started: list[ThreadedServer] = []

    def start(**options: Any) -> ThreadedServer:
        server = ThreadedServer(**options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def population_requests(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every request `sim/population` answers during the test, in order (to check which calls
    the population's rules answer)."""
    from backchannel.backends._population import SimulatedPopulation

    answered: list[Any] = []
    answer = SimulatedPopulation.answer

    def recording(self: SimulatedPopulation, request: Any) -> str:
        answered.append(request)
        return answer(self, request)

    monkeypatch.setattr(SimulatedPopulation, "answer", recording)
    return answered


def done_count(run: Path) -> int:
    """Conversations stored as done in a run directory, read while another process may be
    writing it (0 before the store exists or while it is being created)."""
    database = run / "run.sqlite"
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute("SELECT COUNT(*) FROM conversations WHERE status = 'done'")
            return int(row.fetchone()[0])
    except sqlite3.OperationalError:  # not created yet, or mid-write
        return 0
