"""The viewer's "divergent turns" filter lists exactly the turns the metrics' divergence section
counts, and the conversation page marks them, in the server and in the static copy (Chromium)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from conftest import BROWSER_MARKS, chromium_context

import backchannel as bc
from backchannel.analysis import divergent_turns

from .test_browser import open_page

playwright = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("divergent")
    experiment = {
        "name": "divergent turns",
        "paradigm": "peer_pressure",
        "seed": 3,
        "factors": {"k": [0, 1]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 6}],
            "n_agents": 4,
            "rounds": 2,
            "memory_rounds": 10,
            "order": "fixed",
            "judge": {"kind": "rule"},
        },
        "population": {"peer_pressure": {"hidden_change": 0.3, "public_accommodation": 0.2}},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    bc.run(path, folder / "run")
    return folder / "run"


@pytest.fixture(scope="module")
def counted(run: Path) -> set[tuple[str, int]]:
    """The turns the metrics count as divergent: (conversation, turn seq)."""
    opened = bc.open_run(run)
    metrics = opened.metrics()
    assert isinstance(metrics, bc.Metrics) and metrics.divergence is not None
    total = sum(row.counts["divergent"] for row in metrics.divergence.by_cell)
    pairs = opened.paradigm.stance_pairs(opened.tables, bc.AnalysisOptions())
    assert pairs is not None
    chosen = pairs[divergent_turns(pairs).to_numpy()]
    turns = {
        (str(c), int(s)) for c, s in zip(chosen["conversation_id"], chosen["turn_seq"], strict=True)
    }
    assert len(turns) == total > 0
    return turns


@pytest.fixture(scope="module")
def server(run: Path) -> Iterator[str]:
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        assert process.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
        assert found
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def static_copy(run: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site") / "copy"
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--static"]
    subprocess.run([*command, str(site)], check=True, capture_output=True, timeout=300)
    return (site / "index.html").resolve().as_uri()


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        yield context


@pytest.fixture
def tab(chromium: Any) -> Iterator[Any]:
    page = chromium.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    page.close()


def listed(page: Any, base: str) -> set[tuple[str, int]]:
    open_page(page, base + "#/divergent/0")
    turns = page.eval_on_selector_all(
        "table.divergent-turns tr.divergent-turn", "rows => rows.map(r => r.dataset.turn)"
    )
    found = {(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in turns}
    assert len(found) == len(turns)
    return found


def marked(page: Any, base: str, conversation: str) -> set[int]:
    open_page(page, f"{base}#/conv/0?id={quote(conversation, safe='')}")
    seqs = page.eval_on_selector_all(
        "button.event.divergent", "buttons => buttons.map(b => Number(b.dataset.seq))"
    )
    assert all("divergent" in t for t in page.locator(".divergent-flag").all_text_contents())
    return set(seqs)


def check(page: Any, base: str, counted: set[tuple[str, int]]) -> None:
    assert listed(page, base) == counted
    conversations = sorted({c for c, _ in counted})
    for conversation in conversations[:2]:
        assert marked(page, base, conversation) == {s for c, s in counted if c == conversation}
    # the conversations page links to the filter
    open_page(page, base + "#/run/0")
    assert page.locator("p.divergent-link a").count() == 1
    assert not page.errors


def test_the_filter_lists_the_counted_turns_in_the_server(
    counted: set[tuple[str, int]], server: str, tab: Any
) -> None:
    check(tab, server, counted)


def test_the_filter_lists_the_counted_turns_in_the_static_copy(
    counted: set[tuple[str, int]], static_copy: str, tab: Any
) -> None:
    check(tab, static_copy, counted)
