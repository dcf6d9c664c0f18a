"""Transport retries per event: recorded by a run against a server that fails once, shown by
the event API; runs that did not record them say so (None), never 0."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.view import RunReader, make_app

from ._build import ITEM, peer_pressure_run


def test_a_call_retried_once_shows_one_retry_and_the_others_none(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(faults=[("status", 500)])  # the first request fails, then service
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": server.base_url, "api_key": "sk-test"}],
        retry={"base_delay_s": 0},
    )
    run = tmp_path / "run"
    result = invoke("run", write_experiment(data), "-o", run, "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert server.server.faults_remaining == 0
    reader = RunReader(run)
    try:
        retries = asyncio.run(_retries_through_the_api(reader))
        assert sorted(retries.values()) == [0] * (len(retries) - 1) + [1]
        summary = reader.summary()
        assert [u["retries"] for u in summary["usage"]] == [1]  # the run's own count agrees
    finally:
        reader.close()


async def _retries_through_the_api(reader: RunReader) -> dict[tuple[str, int], int | None]:
    """Every model call's retries, as the event API answers them."""
    found: dict[tuple[str, int], int | None] = {}
    async with TestClient(TestServer(make_app([reader]))) as client:
        for cid in reader.conversation_ids():
            page = await client.get("/api/runs/0/conversation", params={"id": cid})
            for event in (await page.json())["events"]:
                one = await client.get(
                    "/api/runs/0/event", params={"id": cid, "seq": str(event["seq"])}
                )
                detail = await one.json()
                assert detail["retries"] == event["retries"]
                assert "retries" not in detail["meta"]
                if detail["model"]:
                    found[(cid, event["seq"])] = detail["retries"]
    return found


async def test_events_of_a_run_that_did_not_record_retries_say_so(tmp_path: Path) -> None:
    reader = RunReader(peer_pressure_run(tmp_path / "run"))
    try:
        called = reader.event(f"k=1/{ITEM}/0", 1)
        scripted = reader.event(f"k=1/{ITEM}/0", 0)  # the moderator's opening: no model call
        assert called is not None and called["model"] == "sim" and called["retries"] is None
        assert scripted is not None and scripted["retries"] is None
    finally:
        reader.close()
