"""Inspect's own log viewer (the one inspect_ai ships, `inspect view`) opens an exported run in
Debian's Chromium: each cell's sample list shows its conversations, and a sample shows its
model calls by channel and agent."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BROWSER_MARKS, chromium_context, invoke
from inspect_ai.log import read_eval_log

import backchannel as bc

playwright = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def logs(quickstart_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("viewer") / "logs"
    result = invoke("export", quickstart_run, "--format", "inspect", "-o", out)
    assert result.exit_code == 0, result.stderr
    return out


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def viewer(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    command = [
        str(Path(sys.executable).parent / "inspect"),
        "view",
        "--log-dir",
        str(logs),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    home = tmp_path_factory.mktemp("home")  # the viewer keeps its state under $HOME
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the Inspect viewer did not start") from None
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        yield page


def test_the_sample_list_of_each_cell_shows_its_conversations(
    page: Any, viewer: str, logs: Path, quickstart_run: Path
) -> None:
    conversations = bc.open_run(quickstart_run).conversations
    files = sorted(logs.glob("*.eval"))
    assert len(files) == conversations["cell_key"].nunique() == 2
    for path in files:
        header = read_eval_log(str(path), header_only=True).eval.metadata["backchannel"]  # type: ignore[index]
        cell = conversations[conversations["cell_key"] == header["cell_key"]]
        assert len(cell) == 2
        page.goto(f"{viewer}#/tasks/{path.name}")
        footer = page.get_by_text(f"{len(cell)} Samples", exact=True)
        footer.wait_for(timeout=30_000)
        for item in cell["item_id"]:
            assert page.get_by_text(item, exact=True).count() >= 1, (path.name, item)
        assert page.get_by_text("quickstart", exact=True).count() >= 1  # the task: experiment
    assert not page.errors


def test_a_sample_shows_its_calls_by_channel_and_agent(
    page: Any, viewer: str, logs: Path, quickstart_run: Path
) -> None:
    tables = bc.open_run(quickstart_run).tables
    first = tables.conversations.iloc[0]
    name = sorted(p.name for p in logs.glob("*.eval"))[0]
    page.goto(f"{viewer}#/tasks/{name}")
    page.get_by_text(str(first["item_id"]), exact=True).first.click()
    events = tables.events[tables.events["conversation_id"] == first["conversation_id"]]
    probe = events[events["channel"] == "private"].iloc[0]
    header = f"{probe['agent']} ({probe['role']}) · probe/{probe['name']} · round {probe['round']}"
    page.get_by_text(header, exact=False).first.wait_for(timeout=30_000)
    body = page.inner_text("body")
    assert "PRIVATE:" in body.upper() and "PUBLIC:" in body.upper()
    assert str(probe["text"]) in body
    assert not page.errors
