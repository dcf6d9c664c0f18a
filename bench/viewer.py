"""Transcript viewer on a large run: first page, opening a conversation, server memory.

Builds a synthetic peer-pressure run through the run store's API (realistic text and prompt
sizes, judge labels on every answer and turn), serves it with `backchannel view` in a
subprocess, and measures in headless Chromium (time until the page has drawn its data) and over
HTTP (the API calls alone). Memory is the server's resident set after the same sequence of
requests at a small size and again after the run has grown to the full size while served.

A testimony run (5 roles, 3 rounds, every statement citing one to three earlier sources)
measures opening a conversation whose page draws the citation graph, laid out by the server.

    python bench/viewer.py            # 1,000 then 10,000 conversations; testimony 1,000
    python bench/viewer.py --quick    # 40 then 200; testimony 40 (the smoke test runs this)
    python bench/viewer.py --against ../main/src   # this tree vs another, side by side

`--against SRC` serves the same runs a second time with the package found in SRC (another
checkout's `src`) and times, alternately on both servers, the peer-pressure table's pages (50
rows with their figures; each page on its first visit, then again) and opening a testimony
conversation (its page with the citation graph) over the API: medians and their ratio, measured
side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item, Label
from backchannel.paradigms.testimony import Claim, Extraction, label_of
from backchannel.store import RunStore
from backchannel.testing import CHROMIUM, CHROMIUM_ARGS

AGENTS = ("Alice", "Bob", "Carol", "David", "Eve", "Frank")  # Alice is the adversary when k = 1
ROUNDS = 5
JUDGE = "llm-judge"
WORDS = "the answer is clearly supported by the record and I have checked the sources".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _conversation(index: int) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    """One 6-agent, 5-round conversation: 31 public messages and 30 private answers, labelled."""
    rng = random.Random(index)
    k = index % 2
    item = f"q{index // 2:05d}"
    cell = {"model": "openai/model-a", "k": k}
    cid = f"k={k};model=openai/model-a/{item}/0"
    question = {"question": f"Which city is the capital of country {item}?"}
    spec = ConversationSpec(
        cid, "peer_pressure", cell, f"k={k};model=openai/model-a", Item(item, question), 0, index
    )
    events: list[Event] = []
    labels: list[Label] = []
    history: list[str] = []
    system = "You are {}, taking part in a small group discussion about a factual question. " * 2

    def call(kind: str, name: str, round_: int, turn: int | None, agent: str, channel: str,
             text: str, label: str) -> None:  # fmt: skip
        seq = len(events)
        prompt = [["system", system.format(agent, agent)],
                  ["user", "Conversation so far:\n\n" + "\n\n".join(history[-3:])]]  # fmt: skip
        role = "adversary" if k and agent == AGENTS[0] else "honest"
        event = Event(
            seq, kind, name, round_, turn, agent, role, channel,  # type: ignore[arg-type]
            text=text, model="openai/model-a", prompt_tokens=300, completion_tokens=60,
            latency_s=0.4, meta={"prompt": prompt},
        )  # fmt: skip
        events.append(event)
        labels.append(Label(seq, JUDGE, label, "ok", label, "openai/judge"))

    opening = "Welcome. Today's question for the group is: which city?"
    events.append(
        Event(0, "message", "opening", 0, 0, "moderator", "moderator", "public", text=opening)
    )
    for round_ in range(ROUNDS + 1):
        if round_:
            for turn, agent in enumerate(AGENTS):
                text = _text(rng, 60)
                call("message", "turn", round_, turn, agent, "public", text,
                     rng.choice(("endorse", "reject", "hedge", "ignore")))  # fmt: skip
                history.append(f"{agent}: {text}")
        for agent in AGENTS[k:]:
            call("probe", "answer", round_, None, agent, "private", _text(rng, 8),
                 rng.choice(("true", "manipulated", "mixed")))  # fmt: skip
    agents = [
        {"name": a, "role": "adversary" if k and a == AGENTS[0] else "honest"} for a in AGENTS
    ]
    return spec, events, labels, {"agents": agents, "adversaries": list(AGENTS[:k])}


def grow(directory: Path, start: int, stop: int) -> None:
    """Add conversations start..stop-1 to the run (creating it at 0), as a run would."""
    store = RunStore(directory, create=start == 0)
    if start == 0:
        store.write_manifest({
            "run_id": "viewer-bench", "name": "viewer bench", "paradigm": "peer_pressure",
            "factors": ["model", "k"],
            "config_resolved": {"factors": {"model": ["openai/model-a"], "k": [0, 1]},
                                "settings": {"judge": {"name": JUDGE}}, "endpoints": []},
        })  # fmt: skip
    for index in range(start, stop):
        spec, events, labels, meta = _conversation(index)
        usage = UsageMeter()
        usage.model("openai/model-a").calls = len(events) - 1
        store.commit_conversation(spec, index, events, usage, meta, labels=labels)
    store.close()


ROLES = {"Ann": "member", "Ben": "member", "Cy": "member", "Kim": "key", "Sol": "second_key"}
TESTIMONY_ROUNDS = 3


def _testimony(index: int) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    """One C1 conversation: votes at T0, T1 and after each round, five testimonies, three
    rounds of five statements, each citing 1-3 testimonies or earlier statements (markup)."""
    rng = random.Random(index)
    item = f"s{index:05d}"
    cid = f"condition=C1;model=openai/model-a/{item}/0"
    spec = ConversationSpec(
        cid, "testimony", {"model": "openai/model-a", "condition": "C1"},
        "condition=C1;model=openai/model-a", Item(item), 0, index,
    )  # fmt: skip
    events: list[Event] = []
    labels: list[Label] = []
    model = {"model": "openai/model-a", "prompt_tokens": 900, "completion_tokens": 120}

    def votes(number: int) -> None:
        for agent, role in ROLES.items():
            vote = rng.choice(("box", "jar", "bag", "UNKNOWN"))
            events.append(Event(len(events), "probe", "vote", number, None, agent, role, "private",
                                text=vote, value=vote, meta={"checkpoint": label_of(number),
                                "retries": 0}, **model))  # fmt: skip

    votes(0)
    for turn, (agent, role) in enumerate(ROLES.items()):
        events.append(Event(len(events), "message", "testimony", 1, turn, agent, role, "public",
                            text=f"{agent}: " + _text(rng, 40),
                            meta={"kind": "broadcast", "recipients": [], "supports": "box",
                                  "truthful": agent != "Kim"}))  # fmt: skip
    votes(1)
    sources = [("testimony", agent, None) for agent in ROLES]
    for k in range(1, TESTIMONY_ROUNDS + 1):
        said = []
        for turn, (agent, role) in enumerate(ROLES.items()):
            seq = len(events)
            events.append(Event(seq, "message", "statement", 2 * k, turn, agent, role, "public",
                                text=_text(rng, 80), meta={"retries": 0}, **model))  # fmt: skip
            cited = rng.sample([s for s in sources if s[1] != agent or s[0] == "testimony"],
                               rng.randint(1, 3))  # fmt: skip
            claims = tuple(Claim(kind, source, r, rng.choice(("box", "jar", None)))  # type: ignore[arg-type]
                           for kind, source, r in cited)  # fmt: skip
            labels.append(Label(seq, "citations", Extraction(claims, ()).label(), "ok", "", "rule"))
            said.append(("statement", agent, f"R{k}"))
        sources.extend(said)
        votes(2 * k)
    meta = {
        "agents": [{"name": n, "role": r, "model": "openai/model-a"} for n, r in ROLES.items()],
        "endpoint": "box", "decoy": "jar", "rounds": TESTIMONY_ROUNDS, "condition": "C1",
        "intervention": "none", "key": "Kim", "second_key": "Sol",
        "majority": {"participants": 3, "observers": 2, "all": 4},
        "environment": {"chain": [], "roles": list(ROLES), "endpoint": "box", "decoy": "jar"},
    }  # fmt: skip
    return spec, events, labels, meta


def grow_testimony(directory: Path, total: int) -> None:
    store = RunStore(directory, create=True)
    store.write_manifest({
        "run_id": "viewer-bench-testimony", "name": "viewer bench testimony",
        "paradigm": "testimony", "factors": ["model", "condition"],
        "config_resolved": {"factors": {"model": ["openai/model-a"], "condition": ["C1"]},
                            "settings": {}, "endpoints": []},
    })  # fmt: skip
    for index in range(total):
        spec, events, labels, meta = _testimony(index)
        store.commit_conversation(spec, index, events, UsageMeter(), meta, labels=labels)
    store.close()


class Server:
    """`backchannel view RUN --port 0` in a subprocess; its address and resident memory."""

    def __init__(self, run: Path, source: str | None = None) -> None:
        command = [
            str(Path(sys.executable).parent / "backchannel"),
            "view",
            str(run),
            "--port",
            "0",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        if source is not None:  # the package of another checkout, ahead of the installed one
            env["PYTHONPATH"] = source
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            raise RuntimeError(f"the viewer did not start: {line!r}")
        self.url = found.group(0)

    def rss_mib(self) -> tuple[float, float]:
        """(current, peak) resident set of the server process, MiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        values = {
            k: int(v.split()[0]) / 1024 for k, v in re.findall(r"(VmRSS|VmHWM):\s+(.+)", status)
        }
        return values["VmRSS"], values["VmHWM"]

    def get(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode(params)
        url = f"{self.url.rstrip('/')}{path}?{query}"
        with urllib.request.urlopen(url, timeout=60) as response:
            return json.loads(response.read())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


def timed(function: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


@dataclass
class Round:
    conversations: int
    first_page_api_s: float
    last_page_api_s: float
    fpi_sort_api_s: list[float]
    search_api_s: float
    conversation_api_ms: list[float]
    rss_mib: float
    peak_mib: float
    rss_after_sort_mib: float
    browser_first_page_s: list[float]
    browser_conversation_ms: list[float]


@dataclass
class TestimonyRound:
    conversations: int
    edges: float  # mean citation edges per opened conversation
    conversation_api_ms: list[float]
    browser_conversation_ms: list[float]


def testimony_sweep(server: Server, total: int, opens: int, page: Any) -> TestimonyRound:
    """Open `opens` testimony conversations over the API (graph computed on each open) and
    up to 10 in Chromium (until the citation graph is drawn)."""
    rng = random.Random(total)
    ids = [f"condition=C1;model=openai/model-a/s{rng.randrange(total):05d}/0" for _ in range(opens)]
    api_ms, edges = [], []
    for cid in ids:
        elapsed, data = timed(server.get, "/api/runs/0/conversation", id=cid)
        api_ms.append(1000 * elapsed)
        switch = data["page"]["panels"][-1]  # the citation judges' graphs
        edges.append(len(switch["choices"][0]["panels"][0]["edges"]))
    browser_ms: list[float] = []
    if page is not None:
        page.goto(server.url + "#/run/0")
        page.wait_for_selector("table.conversations tbody tr")
        for cid in ids[:10]:
            page.evaluate("document.body.dataset.ready = ''")
            start = time.perf_counter()
            page.evaluate(f"location.hash = '#/conv/0?id=' + encodeURIComponent({json.dumps(cid)})")
            page.wait_for_selector('body:not([data-ready=""]) svg.graph g.gnode')
            browser_ms.append(1000 * (time.perf_counter() - start))
    return TestimonyRound(total, statistics.mean(edges), api_ms, browser_ms)


def sweep(server: Server, total: int, opens: int, page: Any) -> Round:
    """The same requests at every size: first page, last page, a search, `opens` conversations."""
    rng = random.Random(total)
    first, listed = timed(server.get, "/api/runs/0/conversations", limit=50)
    if listed["total"] != total:
        raise RuntimeError(f"the server lists {listed['total']} conversations, expected {total}")
    last, _ = timed(server.get, "/api/runs/0/conversations", limit=50, offset=max(0, total - 50),
                    sort="factor:k", desc=1)  # fmt: skip
    search, _ = timed(
        server.get, "/api/runs/0/conversations", limit=50, q="capital of country q00001"
    )
    picks = [rng.randrange(total) for _ in range(opens)]
    ids = [f"k={i % 2};model=openai/model-a/q{i // 2:05d}/0" for i in picks]
    api_ms = [1000 * timed(server.get, "/api/runs/0/conversation", id=cid)[0] for cid in ids]
    browser_first: list[float] = []
    browser_conv: list[float] = []
    if page is not None:
        for _ in range(3):
            page.goto("about:blank")
            start = time.perf_counter()
            page.goto(server.url + "#/run/0")
            page.wait_for_selector("table.conversations tbody tr")
            browser_first.append(time.perf_counter() - start)
        for cid in ids[:10]:
            page.evaluate("document.body.dataset.ready = ''")
            start = time.perf_counter()
            page.evaluate(f"location.hash = '#/conv/0?id=' + encodeURIComponent({json.dumps(cid)})")
            page.wait_for_selector('body:not([data-ready=""]) td.cell')
            browser_conv.append(1000 * (time.perf_counter() - start))
    rss, peak = server.rss_mib()
    # Sorting by a figure computes it for every conversation not yet seen (then keeps it): timed
    # twice, and the memory it keeps measured apart from the browsing sweep above.
    by_fpi = [
        timed(server.get, "/api/runs/0/conversations", limit=50, sort="metric:fpi", desc=1)[0]
        for _ in range(2)
    ]
    rss_sorted, _ = server.rss_mib()
    return Round(
        total,
        first,
        last,
        by_fpi,
        search,
        api_ms,
        rss,
        peak,
        rss_sorted,
        browser_first,
        browser_conv,
    )


def _browser() -> tuple[Any, Any, Any] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if CHROMIUM is None:
        return None
    manager = sync_playwright().start()
    browser = manager.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
    return manager, browser, browser.new_page()


def main(small: int, large: int, opens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as folder:
        run = Path(folder) / "run"
        build_small, _ = timed(grow, run, 0, small)
        server = Server(run)
        browser = _browser()
        page = browser[2] if browser else None
        try:
            before = sweep(server, small, opens, page)
            build_large, _ = timed(grow, run, small, large)  # the run grows while it is served
            after = sweep(server, large, opens, page)
            server.close()
            grow_testimony(Path(folder) / "testimony", small)
            server = Server(Path(folder) / "testimony")
            testimony = testimony_sweep(server, small, opens, page)
        finally:
            server.close()
            if browser:
                browser[1].close()
                browser[0].stop()
        size_mib = (run / "run.sqlite").stat().st_size / 2**20
    return {
        "build_s": build_small + build_large,
        "size_mib": size_mib,
        "rounds": [before, after],
        "testimony": testimony,
    }


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.3f}" if values else "n/a"


def _max(values: list[float]) -> str:
    return f"{max(values):.3f}" if values else "n/a"


def report(result: dict[str, Any]) -> None:
    print(f"run built through the store API in {result['build_s']:.1f} s; "
          f"run.sqlite {result['size_mib']:.0f} MiB")  # fmt: skip
    print()
    print(
        "| conversations | first page, Chromium s (median / max of 3) | conversation, Chromium "
        "ms (median / max of 10) | first page API s | last page API s | "
        "text search API s | "
        "conversation API ms (median / max) | server RSS MiB | server peak MiB | sorted by FPI "
        "API s (first / again) | server RSS after the sort MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in result["rounds"]:
        first, conv = r.browser_first_page_s, r.browser_conversation_ms
        print(f"| {r.conversations:,} | {_median(first)} / {_max(first)} "
              f"| {_median(conv)} / {_max(conv)} "
              f"| {r.first_page_api_s:.3f} | {r.last_page_api_s:.3f} | {r.search_api_s:.3f} "
              f"| {_median(r.conversation_api_ms)} / {_max(r.conversation_api_ms)} "
              f"| {r.rss_mib:.1f} | {r.peak_mib:.1f} "
              f"| {r.fpi_sort_api_s[0]:.3f} / {r.fpi_sort_api_s[1]:.3f} "
              f"| {r.rss_after_sort_mib:.1f} |")  # fmt: skip
    t = result["testimony"]
    print()
    print(
        "| testimony conversations | citation edges per conversation (mean) | conversation "
        "with its graph, API ms (median / max) | drawn in Chromium ms (median / max of 10) |"
    )
    print("|---|---|---|---|")
    api, drawn = t.conversation_api_ms, t.browser_conversation_ms
    print(f"| {t.conversations:,} | {t.edges:.1f} | {_median(api)} / {_max(api)} "
          f"| {_median(drawn)} / {_max(drawn)} |")  # fmt: skip


def side_by_side(source: str, conversations: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Median ms of the same requests to this tree's server and to one running `source`."""
    rng = random.Random(7)
    timings: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as folder:
        runs = {"peer_pressure": Path(folder) / "pp", "testimony": Path(folder) / "testimony"}
        grow(runs["peer_pressure"], 0, conversations)
        grow_testimony(runs["testimony"], conversations)
        for kind, run in runs.items():
            servers = (Server(run), Server(run, source))
            try:
                pages = list(range(0, conversations - 49, 50))
                for round_ in range(repeats):
                    for index, server in enumerate(servers):
                        if kind == "peer_pressure":
                            # Each page once (its figures computed), then each page again.
                            seen = round_ >= len(pages)
                            offset = pages[round_ % len(pages)]
                            ms = 1000 * timed(server.get, "/api/runs/0/conversations",
                                              limit=50, offset=offset)[0]  # fmt: skip
                            key = "peer-pressure table page (50 rows with figures), " + (
                                "seen before" if seen else "first visit"
                            )
                        else:
                            cid = (f"condition=C1;model=openai/model-a/"
                                   f"s{rng.randrange(conversations):05d}/0")  # fmt: skip
                            ms = 1000 * timed(server.get, "/api/runs/0/conversation", id=cid)[0]
                            key = "testimony conversation with its citation graph"
                        timings.setdefault(key, ([], []))[index].append(ms)
            finally:
                for server in servers:
                    server.close()
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in timings.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 then 200 conversations")
    parser.add_argument("--against", metavar="SRC", help="another checkout's src, side by side")
    parser.add_argument("--repeats", type=int, default=30, help="requests per server (--against)")
    args = parser.parse_args()
    if args.against:
        found = side_by_side(args.against, 200 if args.quick else 1_000, args.repeats)
        print(f"| request (median of {args.repeats}) | this tree ms | {args.against} ms | ratio |")
        print("|---|---|---|---|")
        for key, (mine, theirs) in found.items():
            print(f"| {key} | {mine:.1f} | {theirs:.1f} | {mine / theirs:.2f} |")
    else:
        report(main(40, 200, 10) if args.quick else main(1_000, 10_000, 50))
