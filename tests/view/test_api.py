"""The JSON API over HTTP: paging, filters, errors as JSON, security headers, Host check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from backchannel.view import CSP, RunReader, make_app

from ._build import ITEM, peer_pressure_run


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient]:
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    async with TestClient(TestServer(make_app([reader]))) as client:
        yield client
    reader.close()


async def test_the_table_pages_and_filters(client: TestClient) -> None:
    response = await client.get("/api/runs/0/conversations", params={"limit": "2", "offset": "2"})
    assert response.status == 200
    page = await response.json()
    assert page["total"] == 7 and [c["item_id"] for c in page["conversations"]] == ["p1", "p2"]
    response = await client.get("/api/runs/0/conversations", params={"f.k": "0", "q": "plain"})
    page = await response.json()
    assert [c["item_id"] for c in page["conversations"]] == ["p0", "p2", "p4"]


async def test_a_conversation_and_one_event_with_its_prompt(client: TestClient) -> None:
    cid = f"k=1/{ITEM}/0"
    data = await (await client.get("/api/runs/0/conversation", params={"id": cid})).json()
    assert data["paradigm"] == "peer_pressure" and data["conversation"]["item_id"] == ITEM
    event = await (await client.get("/api/runs/0/event", params={"id": cid, "seq": "1"})).json()
    assert event["agent"] == "Bob" and event["prompt"][0] == {
        "role": "system",
        "content": "You are Bob",
    }


@pytest.mark.parametrize(
    ("path", "params", "status", "message"),
    [
        ("/api/runs/0/conversations", {"sort": "x"}, 400, "cannot sort by 'x'"),
        ("/api/runs/0/conversation", {}, 400, "pass the conversation with ?id="),
        ("/api/runs/0/conversation", {"id": "no/such/0"}, 404, "has no conversation"),
        ("/api/runs/0/event", {"id": "no/such/0", "seq": "x"}, 400, "a whole number"),
        ("/api/runs/0/event", {"id": f"k=1/{ITEM}/0", "seq": "99"}, 404, "has no event 99"),
        ("/api/runs/5/summary", {}, 404, "runs are numbered 0..0"),
        ("/api/nothing", {}, 404, "Not Found"),
    ],
)
async def test_bad_requests_get_a_json_error(
    client: TestClient, path: str, params: dict, status: int, message: str
) -> None:
    response = await client.get(path, params=params)
    assert response.status == status
    assert message in (await response.json())["error"]


async def test_every_response_carries_a_strict_policy(client: TestClient) -> None:
    for path in ("/", "/static/core.js", "/api/runs"):
        response = await client.get(path)
        assert response.status == 200, path
        assert response.headers["Content-Security-Policy"] == CSP
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
    page = await (await client.get("/")).text()
    assert "<script>" not in page and "onload" not in page  # every script is a file


def test_the_viewer_knows_no_paradigm() -> None:
    # Every paradigm's page is drawn from its view hook: nothing under view/ imports, names or
    # draws a particular paradigm, and the page lists the same scripts for every run.
    from backchannel.paradigms import registered

    folder = Path(__file__).resolve().parents[2] / "src" / "backchannel" / "view"
    names = [n for n in registered() if n != "discussion"]
    words = [*names, *(n.replace("_", " ") for n in names), "citation"]
    for path in folder.rglob("*"):
        if path.suffix not in (".py", ".js", ".css", ".html"):
            continue
        text = path.read_text(encoding="utf-8").lower()
        assert "backchannel.paradigms." not in text, path
        assert not [w for w in words if w in text], path
    assert not (folder / "static" / "paradigms").exists()


async def test_a_foreign_host_header_is_refused(tmp_path: Path) -> None:
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    async with TestClient(TestServer(make_app([reader], hosts={"127.0.0.1:1"}))) as client:
        response = await client.get("/api/runs")
        assert response.status == 421
        response = await client.get("/api/runs", headers={"Host": "127.0.0.1:1"})
        assert response.status == 200
    reader.close()


async def test_headline_metrics_on_request(client: TestClient) -> None:
    result = await (await client.get("/api/runs/0/metrics")).json()
    assert set(result) == {"metrics"}
