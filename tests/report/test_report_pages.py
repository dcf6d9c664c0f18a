"""Every example's report in Chromium at 1,280 px: nothing overflows to the right, no table row
is taller than three lines, and (one example per paradigm with factors) every link from a table
row, a headline value or a figure point opens the viewer's static copy on exactly the
conversations of that cell, as many as the headline's n says."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from conftest import BROWSER_MARKS, chromium_context
from typer.testing import CliRunner

from backchannel.cli import app

playwright = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
pytestmark = [*BROWSER_MARKS, pytest.mark.slow]
EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
LINKED = ("peer_pressure", "dyad", "council_housing", "testimony")
"""One example per paradigm with factors, whose links are followed."""
HEADLINE_LINKED = ("peer_pressure", "dyad", "council_housing")
"""Whose headline values link (and count conversations: their n is checked)."""
LIMIT = 8


def open_page(page: Any, url: str) -> None:
    """Open a viewer page and wait until it has drawn (a new hash alone does not reload)."""
    page.evaluate("document.body && delete document.body.dataset.ready")
    page.goto(url)
    page.wait_for_selector("body[data-ready]", state="attached")


def _run(example: Path, folder: Path) -> Path:
    """The example on the simulated population (an offline example on its own models), a
    static copy of the viewer beside it, and the report linking into that copy."""
    run, site = folder / "run", folder / "site"
    runner = CliRunner()
    models = [] if "sim/population" in example.read_text() else ["--model", "sim/population"]
    done = runner.invoke(app, ["run", str(example), "-o", str(run), "--limit", str(LIMIT), *models])
    assert done.exit_code == 0, done.output
    if example.stem in LINKED:
        copied = runner.invoke(app, ["view", str(run), "--static", str(site)])
        assert copied.exit_code == 0, copied.output
    report = runner.invoke(app, ["report", str(run), "--viewer", str(site)])
    assert report.exit_code == 0, report.output
    return run


class Runs:
    """Each example's run, made when a test first asks for it (in a thread of its own: the
    browser's event loop runs in this one, and a run starts its own)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, Path] = {}

    def __getitem__(self, name: str) -> Path:
        if name not in self.made:
            example = next(e for e in EXAMPLES if e.stem == name)
            with ThreadPoolExecutor(1) as pool:
                self.made[name] = pool.submit(_run, example, self.root / name).result()
        return self.made[name]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("examples"))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    viewport = {"width": 1280, "height": 900}
    with chromium_context(tmp_path_factory.mktemp("profile"), viewport=viewport) as context:
        yield context.new_page()


LAYOUT = """() => {
  const main = document.querySelector('main').getBoundingClientRect();
  const out = {page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
               wide: [], tall: [], rows: 0};
  for (const t of document.querySelectorAll('table')) {
    const wrap = t.parentElement;
    const right = t.getBoundingClientRect().right;
    if (right > main.right + 0.5 || wrap.scrollWidth > wrap.clientWidth + 0.5)
      out.wide.push([t.querySelector('caption')?.innerText || t.className, right, main.right]);
    for (const tr of t.querySelectorAll('tr')) {
      out.rows += 1;
      const cell = tr.querySelector('td, th');
      if (!cell) continue;
      const style = getComputedStyle(cell);
      const pad = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + 2;
      const lines = (tr.getBoundingClientRect().height - pad) / parseFloat(style.lineHeight);
      if (lines > 3.05) out.tall.push([tr.innerText.slice(0, 60), lines]);
    }
  }
  for (const svg of document.querySelectorAll('figure svg'))
    if (svg.getBoundingClientRect().right > main.right + 0.5) out.wide.push(['figure', 0, 0]);
  return out;
}"""


@pytest.mark.parametrize("name", [e.stem for e in EXAMPLES])
def test_the_report_fits_1280_px_with_rows_of_at_most_three_lines(
    page: Any, runs: Runs, name: str
) -> None:
    page.goto((runs[name] / "report" / "report.html").resolve().as_uri())
    layout = page.evaluate(LAYOUT)
    assert layout["page"][0] <= layout["page"][1], layout["page"]
    assert layout["wide"] == [] and layout["tall"] == [], layout
    assert layout["rows"] > 0
    # Every figure is downloadable as SVG and PDF, with its data as CSV.
    for figure in page.locator("figure .plot").all():
        stem = figure.get_attribute("id")
        for ext in ("svg", "pdf", "csv"):
            assert (runs[name] / "report" / f"{stem}.{ext}").stat().st_size > 0


def _expected(run: Path, href: str) -> set[str]:
    """The ids of the run's conversations at the levels the link's filters name."""
    import backchannel as bc
    from backchannel.analysis import Design

    tables = bc.open_run(run).tables
    levels = Design.of(tables).levels(tables.conversations)
    fragment = href.split("#", 1)[1]
    query = fragment.split("?", 1)[1] if "?" in fragment else ""
    filters = {k[2:]: json.loads(v) for k, v in parse_qsl(query) if k.startswith("f.")}

    def same(a: Any, b: Any) -> bool:
        return a == b or (isinstance(a, int | float) and isinstance(b, int | float) and a == b)

    return {
        cid for cid, cell in levels.items() if all(same(cell.get(f), v) for f, v in filters.items())
    }


@pytest.mark.parametrize("name", LINKED)
def test_every_link_lists_the_conversations_of_its_cell(page: Any, runs: Runs, name: str) -> None:
    report = (runs[name] / "report" / "report.html").resolve()
    page.goto(report.as_uri())
    links = page.evaluate(
        """() => [...document.querySelectorAll('a.conversations, figure svg a')]
          .map(a => [a.getAttribute('href') || a.getAttribute('xlink:href'), a.textContent,
                     a.closest('table') ? (a.closest('.table-wrap').querySelector('a[href$=".csv"]')
                       ?.getAttribute('href') || '') : 'figure'])
          .filter(([href]) => href)"""
    )
    assert links, "no link to the viewer in the report"
    assert any(where == "figure" for _, _, where in links), "no figure point links"
    headline = [(h, text) for h, text, where in links if where == "headline.csv"]
    if name in HEADLINE_LINKED:
        assert headline, "no headline value links"
    counted = 0
    for href in sorted({h for h, _, _ in links}):
        # The static copy beside the run, reached relative to the report (run/report/).
        assert href.startswith("../../site/index.html#/run/0"), href
        open_page(page, (report.parent / href.split("#")[0]).resolve().as_uri() + "#" +
                  href.split("#", 1)[1])  # fmt: skip
        assert page.locator(".error-page").count() == 0, href
        expected = _expected(runs[name], href)
        assert expected, href  # a link never points to an empty cell
        shown = set(page.locator("table.conversations a.open").all_inner_texts())
        total = re.search(r"of (\d+)", page.locator("p.pager").inner_text())
        assert total is not None and int(total.group(1)) == len(expected), href
        if len(expected) <= 50:
            assert shown == expected, href
        for text in {t for h, t in headline if h == href}:
            n = re.search(r"n=(\d+)$", text)
            # A conversation-level estimate counts the cell's conversations (the turn rates of
            # peer pressure count turns, more than one a conversation).
            if n is not None and ("[" in text or name == "council_housing"):
                assert int(n.group(1)) == len(expected), (href, text)
                counted += 1
    if name in HEADLINE_LINKED:
        assert counted > 0
