"""A paradigm written outside the package (examples/plugin) gets its own columns and panels in
the viewer, drawn in Chromium from its view hook alone, in the server and the static copy."""

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
from conftest import BROWSER_MARKS, chromium_context

from .test_browser import assert_inert, open_page

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugin"
BACKCHANNEL = str(Path(sys.executable).with_name("backchannel"))
playwright = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
pytestmark = [*BROWSER_MARKS, pytest.mark.slow]


def _env() -> dict[str, str]:
    # The plugin is importable, not installed: the run names it by its class path.
    return {**os.environ, "PYTHONPATH": str(PLUGIN), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plugin")
    text = (PLUGIN / "experiment.yaml").read_text()
    (folder / "experiment.yaml").write_text(
        text.replace("paradigm: poll ", "paradigm: backchannel_poll:Poll ")
    )
    done = subprocess.run(
        [BACKCHANNEL, "run", "experiment.yaml", "-o", "run", "--model", "sim"],
        cwd=folder, env=_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder / "run"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        yield context


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page()
    page.requests, page.errors = [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    page.close()


def check_pages(page: Any, base: str) -> None:
    open_page(page, base + "#/run/0")
    heads = page.locator("table.conversations thead th").all_inner_texts()
    assert "yes before" in " ".join(heads) and "changed" in " ".join(heads)
    rows = page.locator("table.conversations tbody tr")
    assert rows.count() == 4  # agents 3 and 4, two statements
    share = rows.nth(0).locator('td.metric[data-key="yes_before"]').inner_text()
    assert re.fullmatch(r"[01](\.\d{3})?", share), share
    cid = rows.nth(0).locator("a.open").inner_text()
    open_page(page, base + "#/conv/0?id=" + quote(cid, safe=""))
    ballots = page.locator("table.ballots tbody tr")
    assert ballots.count() == 3  # the first conversation has three agents
    assert page.locator("table.ballots thead th").all_inner_texts() == [
        "agent", "checkpoint 0", "checkpoint 1", "checkpoint 2",
    ]  # fmt: skip
    votes = page.locator("table.ballots td[data-vote]").all()
    assert len(votes) == 9 and {v.get_attribute("data-vote") for v in votes} <= {"yes", "no"}
    assert page.locator(".panel-plot svg.plot").count() == 1
    assert page.locator(".timeline button.event").count() == 6  # 3 agents x 2 rounds
    votes[0].locator("button.event").click()
    page.wait_for_selector("#detail ol.prompt")
    assert "probe/vote" in page.locator("#detail h2").inner_text()
    assert_inert(page)


def test_the_plugin_view_in_the_server(page: Any, run: Path) -> None:
    process = subprocess.Popen(
        [BACKCHANNEL, "view", str(run), "--port", "0"], stdout=subprocess.PIPE, text=True,
        env=_env(),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
        assert found
        check_pages(page, found.group(0))
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_plugin_view_in_the_static_copy(page: Any, run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    done = subprocess.run(
        [BACKCHANNEL, "view", str(run), "--static", str(copy)], env=_env(), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    check_pages(page, (copy / "index.html").resolve().as_uri())
    assert all(u.startswith("file://") for u in page.requests), page.requests
