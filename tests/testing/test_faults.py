"""Fault scripts: tuples parse into validated fault values; typos fail at construction."""

import pytest

from backchannel.testing import DelayFault, DisconnectFault, FakeOpenAIServer, StatusFault
from backchannel.testing._faults import parse_script


def test_tuples_parse_into_fault_values() -> None:
    script = parse_script(
        [None, ("status", 429, 0), ("status", 500), ("delay", 0.25), ("disconnect",)]
    )
    assert script == [
        None,
        StatusFault(429, 0.0),
        StatusFault(500, None),
        DelayFault(0.25),
        DisconnectFault(),
    ]


@pytest.mark.parametrize(
    "entry",
    [("status", 200), ("status",), ("delay", -1), ("explode",), (), "status", ("disconnect", 1)],
)
def test_bad_entries_are_rejected(entry: object) -> None:
    with pytest.raises(ValueError):
        parse_script([entry])


def test_server_validates_its_script_when_built() -> None:
    with pytest.raises(ValueError):
        FakeOpenAIServer(faults=[("status", 299)])


def test_body_faults_and_mixed_scripts() -> None:
    from backchannel.testing import BodyFault, mixed_script

    html, truncated, empty = parse_script([("html",), ("truncated",), ("empty_choices",)])
    assert isinstance(html, BodyFault) and html.content_type == "text/html"
    assert isinstance(truncated, BodyFault) and truncated.body.startswith("{")
    assert isinstance(empty, BodyFault) and '"choices": []' in empty.body
    assert parse_script([("body", "x", "text/plain")]) == [BodyFault("x", "text/plain")]
    script = mixed_script(3000, 0.33, [("status", 500), ("disconnect",)], seed=5)
    assert script == mixed_script(3000, 0.33, [("status", 500), ("disconnect",)], seed=5)
    share = sum(f is not None for f in script) / len(script)
    assert 0.30 < share < 0.36
    assert {type(f) for f in script if f is not None} == {StatusFault, DisconnectFault}
    assert mixed_script(10, 0.0, []) == [None] * 10
    for bad in [(-1, 0.1, [("disconnect",)]), (5, 1.5, [("disconnect",)]), (5, 0.5, [])]:
        with pytest.raises(ValueError):
            mixed_script(*bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        parse_script([("body", "x", "nocontenttype")])


async def test_capacity_changes_mid_run_and_a_full_queue_answers_429() -> None:
    import asyncio

    import aiohttp

    from backchannel.testing import FakeOpenAIServer

    body = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
    async with (
        FakeOpenAIServer(latency=0.05, slots=2, max_queue=1) as server,
        aiohttp.ClientSession() as session,
    ):

        async def post() -> int:
            async with session.post(f"{server.base_url}/chat/completions", json=body) as r:
                return r.status

        # 2 in service, 1 queued, the 4th and 5th refused.
        statuses = await asyncio.gather(*(post() for _ in range(5)))
        assert sorted(statuses) == [200, 200, 200, 429, 429]
        assert server.rate_limited == 2 and server.max_concurrency == 2
        root = server.base_url.removesuffix("/v1")
        async with session.post(f"{root}/capacity", json={"slots": 5}) as response:
            assert (await response.json())["slots"] == 5
        statuses = await asyncio.gather(*(post() for _ in range(5)))
        assert statuses == [200] * 5 and server.max_concurrency == 5
        async with session.post(f"{root}/capacity", json={"slots": 0}) as response:
            assert response.status == 400
