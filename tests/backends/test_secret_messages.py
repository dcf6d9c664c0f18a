"""A server's error message may echo the request's fields: what is stored of it (the call's
error) and what is printed holds no key-shaped string, and the endpoint is shown without
user-info or query string."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from backchannel.backends import Message, Request, RequestRejected, shown_url
from backchannel.backends._openai import OpenAIBackend

ECHOED = "sk-proj-echoedKEY0123456789abcdef"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlY2hvIn0.c2lnbmF0dXJl"


@pytest.fixture
async def echoing() -> AsyncIterator[str]:
    async def chat(request: web.Request) -> web.Response:
        status = int(request.query.get("status", "400"))
        message = f"unknown fields: api_key={ECHOED}, session={JWT}; min_p is fine"
        return web.json_response({"error": {"message": message}}, status=status)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    await runner.cleanup()


async def test_an_echoed_key_in_a_servers_error_is_not_kept(echoing: str) -> None:
    backend = OpenAIBackend(base_url=echoing, api_key="k")
    try:
        with pytest.raises(RequestRejected) as raised:
            await backend.generate(Request("openai/m", (Message("user", "hi"),), seed=1))
    finally:
        await backend.aclose()
    message = str(raised.value)
    assert ECHOED not in message and JWT not in message
    assert "api_key=<redacted>" in message and "min_p is fine" in message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://h:8000/v1", "http://h:8000/v1"),
        ("http://u:secret@h:8000/v1/", "http://<redacted>@h:8000/v1/"),
        ("http://h:8000/v1/?api_key=abc", "http://h:8000/v1/?<redacted>"),
        ("https://h/v1#tok", "https://h/v1?<redacted>"),
    ],
)
def test_an_endpoint_is_shown_without_user_info_or_query(url: str, shown: str) -> None:
    assert shown_url(url) == shown
