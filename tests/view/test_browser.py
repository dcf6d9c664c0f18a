"""The viewer in a real Chromium (Debian's package, driven by playwright): pages, the grid,
prompts on click, the agent filter, inert XSS payloads and the static copy from file://."""

from __future__ import annotations

import json
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

from ._build import (
    ADVERSARY,
    CANARY,
    GRAPH_AGENT,
    ITEM,
    P_LINK,
    P_NUL,
    P_RTL,
    P_SCRIPT,
    answer_text,
    build_testimony_run,
    citation_run,
    discussion_run,
    peer_pressure_run,
    prompt_text,
    reasoning_text,
)

playwright = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
pytestmark = BROWSER_MARKS
CID = f"k=1/{ITEM}/0"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return peer_pressure_run(tmp_path_factory.mktemp("viewer") / "run")


@pytest.fixture(scope="module")
def server(run: Path) -> Iterator[str]:
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        yield context


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page()
    page.requests = []  # every URL the page asked for
    page.on("request", lambda request: page.requests.append(request.url))
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    page.close()


def open_page(page: Any, url: str) -> None:
    # A change of the hash alone does not reload the page: clear the mark of the last render.
    page.evaluate("document.body && delete document.body.dataset.ready")
    page.goto(url)
    page.wait_for_selector("body[data-ready]", state="attached")


def conversation_url(base: str, **extra: str) -> str:
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in {"id": CID, **extra}.items())
    return f"{base}#/conv/0?{query}"


def cell(page: Any, round_: int, agent: str) -> Any:
    return page.locator(f'td.cell[data-round="{round_}"][data-agent="{agent}"]')


def assert_inert(page: Any) -> None:
    assert not [u for u in page.requests if u.startswith(CANARY)], page.requests
    assert page.title() == "backchannel viewer"
    assert (
        page.locator("#app img, #detail img, #app svg[onload], a[href^='javascript']").count() == 0
    )
    assert (
        page.evaluate("document.querySelectorAll('[onerror], [onload], [onmouseover]').length") == 0
    )
    assert not page.errors


def test_the_run_page_and_the_table_list_the_conversations(page: Any, server: str) -> None:
    open_page(page, server + "#/")
    assert "view test" in page.locator(".run-card h1").inner_text()
    assert "7" in page.locator("a.to-list").inner_text()
    open_page(page, server + "#/run/0")
    rows = page.locator("table.conversations tbody tr")
    assert rows.count() == 7
    assert rows.nth(0).locator("a.open").inner_text() == CID  # the payload item id, as text
    open_page(page, server + "#/run/0?status=failed")
    assert page.locator("table.conversations tbody tr").count() == 1
    assert_inert(page)


def test_an_unknown_conversation_or_page_gets_an_error_page(page: Any, server: str) -> None:
    open_page(page, server + "#/conv/0?id=" + quote("no/such/0", safe=""))
    assert "the run has no conversation 'no/such/0'" in page.locator(".error-page").inner_text()
    open_page(page, server + "#/nowhere")
    assert "there is no page" in page.locator(".error-page").inner_text()


def test_the_grid_puts_public_messages_and_private_answers_in_their_cells(
    page: Any, server: str
) -> None:
    open_page(page, conversation_url(server))
    bob = cell(page, 1, "Bob")
    assert bob.locator("button.event.public .text").inner_text() == P_SCRIPT
    assert bob.locator("button.event.private .text").inner_text() == answer_text("Bob", 1)
    assert "hedge" in bob.locator("button.event.public").inner_text()
    assert "manipulated" in bob.locator("button.event.private").inner_text()
    assert bob.get_attribute("data-mark") == "hidden_infection"
    assert "flagged" in (bob.get_attribute("class") or "")
    assert "hidden infection" in bob.locator(".flag").text_content()
    carol = cell(page, 1, "Carol")
    assert "flagged" in (carol.get_attribute("class") or "")
    assert "silent knower" in carol.locator(".flag").text_content()
    assert cell(page, 0, "Dave").locator("button.event.private .text").inner_text() == answer_text(
        "Dave", 0
    )
    assert page.locator("th.tone-negative .chip-role").inner_text() == "adversary"
    assert_inert(page)


def test_clicking_a_turn_shows_the_prompt_it_was_sent(page: Any, server: str) -> None:
    open_page(page, conversation_url(server))
    button = cell(page, 2, "Dave").locator("button.event.public")
    seq = button.get_attribute("data-seq")
    button.click()
    page.wait_for_selector("#detail ol.prompt")
    detail = page.locator("#detail")
    assert prompt_text("Dave", int(seq)) in detail.inner_text()
    assert detail.locator(".reasoning").inner_text() == reasoning_text("Dave", int(seq))
    assert "hedge" in detail.inner_text() and "stance rationale" in detail.inner_text()
    # this run predates per-event retries: it says so rather than showing 0
    assert re.search(r"retries\s+not recorded", detail.locator("dl.facts").inner_text())
    # the NUL byte is shown as a visible mark, not dropped
    assert "before␀after" in detail.locator(".raw").inner_text()
    assert_inert(page)


def test_the_agent_filter_hides_other_agents_private_answers(page: Any, server: str) -> None:
    open_page(page, conversation_url(server, agent="Bob"))
    assert cell(page, 1, "Bob").locator("button.event.private").count() == 1
    # a mark that rests on another agent's private answer goes with it
    assert cell(page, 2, "Dave").locator(".flag").count() == 0
    assert "flagged" not in (cell(page, 2, "Dave").get_attribute("class") or "")
    for agent in ("Carol", "Dave"):
        for round_ in (0, 1, 2):
            assert cell(page, round_, agent).locator("button.event.private").count() == 0
    # what Bob saw in public stays
    assert cell(page, 1, "Carol").locator("button.event.public .text").inner_text() == P_LINK
    open_page(page, conversation_url(server))
    page.select_option("#agent-filter", "Carol")
    page.wait_for_selector("p.filter-note")
    assert cell(page, 1, "Bob").locator("button.event.private").count() == 0
    assert cell(page, 1, "Carol").locator("button.event.private").count() == 1


def test_payloads_in_text_names_and_items_stay_inert_and_readable(page: Any, server: str) -> None:
    open_page(page, conversation_url(server))
    text = page.locator("#app").inner_text()
    assert P_SCRIPT in text and P_LINK in text and ADVERSARY in text and ITEM in text
    assert "safe [U+202E]txt.exe[U+202C] end" in text  # the override cannot reorder the text
    assert P_RTL not in text and P_NUL not in text
    for locator in page.locator("button.event").all()[:12]:  # rationale texts carry <img onerror>
        locator.click()
        page.wait_for_selector("#detail h2")
        page.locator("#detail .close").click()
    open_page(
        page, server + f"#/compare?a=0:{quote(CID, safe='')}&b=0:{quote('k=0/p0/0', safe='')}"
    )
    assert page.locator(".compare .pane").count() == 2
    assert_inert(page)


def test_the_static_copy_works_from_file(page: Any, run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    command = [
        str(Path(sys.executable).parent / "backchannel"),
        "view",
        str(run),
        "--static",
        str(copy),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    base = (copy / "index.html").resolve().as_uri()
    open_page(page, base + "#/run/0?f.k=1")
    assert page.locator("table.conversations tbody tr").count() == 4
    open_page(page, conversation_url(base))
    assert cell(page, 1, "Bob").locator("button.event.public .text").inner_text() == P_SCRIPT
    cell(page, 1, "Bob").locator("button.event.private").click()
    page.wait_for_selector("#detail ol.prompt")
    assert "PROMPT-MARKER Bob" in page.locator("#detail").inner_text()
    assert all(u.startswith("file://") for u in page.requests), page.requests
    assert_inert(page)


def test_the_generic_timeline_filters_what_one_agent_saw(page: Any, tmp_path: Path) -> None:
    run = discussion_run(tmp_path / "discussion")
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
        assert found
        base = found.group(0) + "#/conv/0?id=" + quote("model=sim/d1/0", safe="")

        def texts(agent: str) -> list[str]:
            open_page(page, base + (f"&agent={agent}" if agent else ""))
            return page.locator(".timeline button.event .text").all_inner_texts()

        everything = ["A to everyone", "A to B only", "B privately", "C privately"]
        assert texts("") == everything
        assert texts("B") == ["A to everyone", "A to B only", "B privately"]
        assert texts("C") == ["A to everyone", "C privately"]
        assert texts("A") == ["A to everyone", "A to B only"]
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_testimony_view_shows_chain_windows_votes_and_direct_messages(
    page: Any, tmp_path: Path
) -> None:
    run = build_testimony_run(tmp_path / "testimony")
    copy = tmp_path / "copy"
    command = [
        str(Path(sys.executable).parent / "backchannel"),
        "view",
        str(run),
        "--static",
        str(copy),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    base = (
        (copy / "index.html").resolve().as_uri() + "#/conv/0?id=" + quote("model=sim/s1/0", safe="")
    )
    open_page(page, base)
    assert page.locator("table.chain thead th[data-node]").count() == 3
    assert page.locator('table.chain tr[data-agent="Cy"] td[data-seen="1"]').count() == 2
    t1 = page.locator('table.votes tr[data-agent="Ann"] td[data-checkpoint="T1"]')
    assert t1.get_attribute("data-kind") == "decoy" and "jar" in t1.inner_text()
    failed = page.locator('table.votes tr[data-agent="Cy"] td[data-checkpoint="R1"]')
    assert failed.get_attribute("data-kind") == "failed"
    assert "false testimony" in page.locator("table.messages").inner_text()
    # rounds carry the paradigm's names: the testimony at T1, votes at T0, T1, R1
    assert page.locator("table.messages tbody tr td").first.inner_text() == "T1"
    heads = page.locator("table.votes thead th").all_inner_texts()
    assert heads == ["agent", "T0", "T1", "R1"]
    assert "truth majority at R1" in page.locator(".conv-head .badges").inner_text()
    open_page(page, base + "&agent=Ben")  # the direct message went to Ann only
    assert page.locator("table.messages tbody tr").count() == 0
    assert page.locator('table.votes tr[data-agent="Ann"] button.event').count() == 0
    open_page(page, base + "&agent=Ann")
    assert page.locator("table.messages tbody tr").count() == 1


def serve(run: Path) -> tuple[subprocess.Popen[str], str]:
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    found = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline())
    assert found
    return process, found.group(0)


def graph_node(page: Any, seq: int) -> Any:
    return page.locator(f'svg.graph g.gnode[data-seq="{seq}"]')


def test_the_citation_graph_marks_its_roots_and_a_node_opens_its_event(
    page: Any, tmp_path: Path
) -> None:
    process, base = serve(citation_run(tmp_path / "citations"))
    try:
        url = base + "#/conv/0?id=" + quote("condition=C1/g1/0", safe="")
        open_page(page, url)
        assert page.locator("svg.graph g.gnode").count() == 9
        assert page.locator("svg.graph path.edge").count() == 5
        true_root, false_root = graph_node(page, 1), graph_node(page, 0)
        assert "border-strong" in (true_root.get_attribute("class") or "")
        assert true_root.get_attribute("data-root") == "true"
        assert true_root.locator("text.line3").text_content() == "TRUE ROOT"  # not colour alone
        assert "border-dashed" in (false_root.get_attribute("class") or "")
        assert false_root.locator("text.line3").text_content() == "FALSE ROOT"
        assert "other testimony" in graph_node(page, 2).text_content()
        assert "holds true + false roots" in graph_node(page, 6).text_content()
        failed = graph_node(page, 5)
        assert failed.locator("text.line2").text_content() == "extraction failed"
        assert failed.locator("text.line3").text_content() == "parse_failure"
        # the payload name is shown as text (cut to fit the node; whole in its title)
        assert graph_node(page, 5).locator("title").text_content().startswith(GRAPH_AGENT)
        assert graph_node(page, 5).locator("text.line0").text_content() == GRAPH_AGENT[:20] + "…"
        unresolved = page.locator("table.unresolved tbody tr")
        assert unresolved.count() == 2 and "later_round" in unresolved.nth(0).inner_text()
        assert "source_not_in_conversation" in unresolved.nth(1).inner_text()
        graph_node(page, 3).click()
        page.wait_for_selector("#detail h2")
        detail = page.locator("#detail")
        assert detail.locator("h2").inner_text() == "Ann · message/statement"
        facts = detail.locator("dl.facts").inner_text()
        assert re.search(r"retries\s+2", facts), facts
        page.locator("#detail .close").click()
        graph_node(page, 5).focus()
        page.keyboard.press("Enter")
        page.wait_for_selector("#detail h2")
        assert "message/statement" in page.locator("#detail h2").inner_text()
        page.select_option("select.citation-judge", "citations_llm")
        assert page.locator("svg.graph path.edge").count() == 1
        assert_inert(page)

        open_page(page, url + "&agent=Ben")  # Sol's testimony went to Ann only
        assert graph_node(page, 1).count() == 0 and graph_node(page, 0).count() == 1
        assert page.locator("svg.graph path.edge").count() == 3
        assert "left out" in page.locator("p.graph-filter-note").inner_text()

        open_page(page, base + "#/conv/0?id=" + quote("condition=C1/g2/0", safe=""))
        assert page.locator("svg.graph").count() == 0
        assert "no citation judge labelled it" in page.locator(".panel-prose").last.inner_text()
        assert_inert(page)
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_citation_graph_in_the_static_copy(page: Any, tmp_path: Path) -> None:
    run = citation_run(tmp_path / "citations")
    copy = tmp_path / "copy"
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--static"]
    subprocess.run([*command, str(copy)], check=True, capture_output=True, timeout=120)
    url = (copy / "index.html").resolve().as_uri() + "#/conv/0?id="
    open_page(page, url + quote("condition=C1/g1/0", safe=""))
    assert page.locator("svg.graph g.gnode").count() == 9
    assert "TRUE ROOT" in graph_node(page, 1).text_content()
    graph_node(page, 4).click()
    page.wait_for_selector("#detail h2")
    assert page.locator("#detail h2").inner_text() == "Ben · message/statement"
    assert all(u.startswith("file://") for u in page.requests), page.requests
    assert_inert(page)


def test_a_url_lists_the_conversations_of_a_cell_and_an_outcome(page: Any, tmp_path: Path) -> None:
    from ._build import testimony_outcomes_run

    run = testimony_outcomes_run(tmp_path / "outcomes")
    copy = tmp_path / "copy"
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--static"]
    subprocess.run([*command, str(copy)], check=True, capture_output=True, timeout=120)
    process, base = serve(run)
    wanted = "#/run/0?f.condition=" + quote('"C1"') + "&m.R1=" + quote('"decoy"')
    try:
        for root in (base, (copy / "index.html").resolve().as_uri()):
            open_page(page, root + wanted)
            rows = page.locator("table.conversations tbody tr")
            assert [rows.nth(i).locator("td").nth(2).inner_text() for i in range(rows.count())] == [
                "s1",
                "s4",
            ]
            assert "of 2" in page.locator("p.pager").inner_text()
            note = page.locator("p.figure-filter").inner_text()
            assert "R1" in note and '"decoy"' in note
            # the filter stays when another filter is applied, and "show all" drops it
            page.select_option('select[name="status"]', "done")
            page.locator("form.filters button[type=submit]").click()
            page.wait_for_function("location.hash.includes('status=done')")
            page.wait_for_selector("body[data-ready]", state="attached")
            assert "m.R1=" in page.evaluate("location.hash")
            open_page(page, root + "#/run/0?m.R1=decoy")  # not JSON: said, not guessed
            assert "must be JSON" in page.locator(".error-page").inner_text()
        assert_inert(page)
    finally:
        process.terminate()
        process.wait(timeout=20)


def long_run(directory: Path) -> Path:
    """The payload conversation with a 200,000-character word, a 1 MB message of words and a
    1 MB answer without a space (degenerate output, a base64 blob)."""
    from dataclasses import replace

    from backchannel.store import RunStore

    from ._build import commit, manifest, peer_pressure_conversation

    spec, events, labels, meta = peer_pressure_conversation()
    texts = {1: "W" * 200_000, 5: ("lorem ipsum dolor " * 60_000)[:1_000_000], 6: "Zm9v" * 250_000}
    events = [replace(e, text=texts.get(e.seq, e.text)) for e in events]
    store = RunStore(directory, create=True)
    store.write_manifest(manifest())
    commit(store, (spec, events, labels, meta), 0)
    store.close()
    return directory


def test_a_long_word_and_a_1_mb_message_draw_in_under_two_seconds(
    page: Any, tmp_path: Path
) -> None:
    run = long_run(tmp_path / "long")
    copy = tmp_path / "copy"
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--static"]
    subprocess.run([*command, str(copy)], check=True, capture_output=True, timeout=300)
    process, base = serve(run)
    try:
        for root in (base, (copy / "index.html").resolve().as_uri()):
            open_page(page, root + "#/run/0")  # the run's data is loaded before the clock starts
            start = page.evaluate("performance.now()")
            page.evaluate("delete document.body.dataset.ready")
            page.evaluate(f"location.hash = {json.dumps(conversation_url(''))}")
            page.wait_for_selector("body[data-ready] td.cell", state="attached")
            page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
            drawn = page.evaluate("performance.now()") - start
            assert drawn < 2000, f"the conversation took {drawn:.0f} ms to draw"
            # Folded: each long text shows its start and says how long it is.
            word = page.locator("button.event .text.folded", has_text="WWWW").first
            assert "show all (200,000 characters)" in word.inner_text()
            assert page.locator(".show-all").count() == 3
            # Shown whole on request (still cheap): every character is there.
            start = page.evaluate("performance.now()")
            word.locator(".show-all").click()
            page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
            assert page.evaluate("performance.now()") - start < 2000
            unfolded = page.locator(".text.unfolded").first
            assert unfolded.evaluate("node => node.textContent.length") == 200_000
            assert page.locator("#detail").is_hidden()  # unfolding did not open the event
            box = unfolded.bounding_box()
            assert box is not None and box["width"] < 1000  # the word wraps inside its cell
        assert_inert(page)
    finally:
        process.terminate()
        process.wait(timeout=20)
