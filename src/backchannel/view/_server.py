"""The viewer's local web server: the front end's files and a JSON API over read-only runs.

Every response carries a strict Content-Security-Policy (scripts only from this server, no
inline script, no other origin) and `nosniff`, aiohttp's own error answers included, and
requests whose Host is not this server (or that name none) are refused, so a web page elsewhere
cannot read a run through the visitor's browser.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from backchannel.view._headline import finite
from backchannel.view._page import index_html
from backchannel.view._query import BadQuery, ListQuery
from backchannel.view._reader import RunReader, RunUnreadable

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
READERS: web.AppKey[list[RunReader]] = web.AppKey("readers", list)
HOSTS: web.AppKey[set[str] | None] = web.AppKey("hosts", object)  # type: ignore[arg-type]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(payload: Any, status: int = 200) -> web.Response:
    text = json.dumps(finite(payload), ensure_ascii=False, default=str)
    return web.Response(text=text, status=status, content_type="application/json", charset="utf-8")


SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer carries the policy, aiohttp's own included (its 400 for a request it
    cannot parse, 404, 403, 405): this runs as each response is prepared."""
    response.headers.update(SECURITY_HEADERS)


def _host_of(request: web.Request) -> str | None:
    """The request's Host header (None without one: HTTP/1.0 clients may omit it)."""
    return request.headers.get("Host")


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host check and error mapping (JSON for the API); no failure becomes a traceback."""
    hosts = request.app[HOSTS]
    if hosts is not None and _host_of(request) not in hosts:
        return web.Response(status=421, text="this viewer answers only on its own address")
    try:
        return await handler(request)
    except BadQuery as error:
        return _json({"error": str(error)}, 400)
    except RunUnreadable as error:  # deleted, moved or damaged while served
        return _json({"error": str(error)}, 503)
    except sqlite3.DatabaseError as error:
        return _json({"error": f"the run store cannot be read ({error}); it may be damaged"}, 500)
    except web.HTTPException as error:
        if not request.path.startswith("/api/"):
            raise
        return _json({"error": error.text or error.reason}, error.status)


def _reader(request: web.Request) -> RunReader:
    readers = request.app[READERS]
    try:
        index = int(request.match_info["run"])
        return readers[index]
    except (ValueError, IndexError):
        raise web.HTTPNotFound(
            text=f"no run {request.match_info['run']!r}; runs are numbered 0..{len(readers) - 1}"
        ) from None


def _conversation_id(request: web.Request) -> str:
    cid = request.query.get("id")
    if not cid:
        raise BadQuery("pass the conversation with ?id=CONVERSATION_ID")
    return cid


async def _index(request: web.Request) -> web.Response:
    return web.Response(text=index_html(static=False), content_type="text/html", charset="utf-8")


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


async def _runs(request: web.Request) -> web.Response:
    return _json({"runs": [reader.summary() for reader in request.app[READERS]]})


async def _summary(request: web.Request) -> web.Response:
    return _json(_reader(request).summary())


async def _page(request: web.Request) -> web.Response:
    return _json(_reader(request).page(ListQuery.from_params(dict(request.query))))


async def _conversation(request: web.Request) -> web.Response:
    cid = _conversation_id(request)
    found = _reader(request).conversation(cid, request.query.get("judge") or None)
    if found is None:
        raise web.HTTPNotFound(text=f"the run has no conversation {cid!r}")
    return _json(found)


async def _event(request: web.Request) -> web.Response:
    cid = _conversation_id(request)
    try:
        seq = int(request.query.get("seq", ""))
    except ValueError:
        raise BadQuery("pass the event with &seq=N (a whole number)") from None
    found = _reader(request).event(cid, seq)
    if found is None:
        raise web.HTTPNotFound(text=f"conversation {cid!r} has no event {seq}")
    return _json(found)


async def _metrics(request: web.Request) -> web.Response:
    return _json(_reader(request).headline())


async def _divergent(request: web.Request) -> web.Response:
    return _json(_reader(request).divergent(request.query.get("judge") or None))


class _Connection(web.RequestHandler):
    """aiohttp's connection handler, whose own answers to a request it cannot parse (400) carry
    the security headers too (they are made before any application code runs)."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        response = super().handle_error(request, status, exc, message)
        response.headers.update(SECURITY_HEADERS)
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """One line, never a traceback: a request the viewer cannot parse (or a failure it did
        not foresee) is said in the terminal, with its reason."""
        error = kw.get("exc_info")
        what = str(args[0] % args[1:]) if args else "error"
        text = " ".join(str(error).split())
        reason = f": {type(error).__name__}: {text[:160]}{'…' if len(text) > 160 else ''}"
        self.logger.warning(
            "viewer: %s%s", what, reason if isinstance(error, BaseException) else ""
        )


async def serve(app: web.Application, sock: socket.socket, stop: asyncio.Event) -> None:
    """Serve `app` on the bound `sock` until `stop` is set; open connections get a second."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    loop = asyncio.get_running_loop()
    manager = runner.server
    assert manager is not None
    quiet: dict[str, Any] = {"access_log": None}  # no access log lines in the terminal
    server = await loop.create_server(lambda: _Connection(manager, loop=loop, **quiet), sock=sock)
    try:
        await stop.wait()
    finally:
        server.close()
        await runner.cleanup()


def make_app(readers: list[RunReader], *, hosts: set[str] | None = None) -> web.Application:
    """The viewer as an aiohttp application over already opened runs.

    `hosts` are the Host header values accepted (None accepts any, for an explicit --host).
    """
    app = web.Application(middlewares=[_guard])
    app.on_response_prepare.append(_secure)
    app[READERS] = readers
    app[HOSTS] = hosts
    static = resources.files("backchannel.view") / "static"
    app.router.add_get("/", _index)
    app.router.add_get("/favicon.ico", _no_icon)
    app.router.add_get("/api/runs", _runs)
    app.router.add_get("/api/runs/{run}/summary", _summary)
    app.router.add_get("/api/runs/{run}/conversations", _page)
    app.router.add_get("/api/runs/{run}/conversation", _conversation)
    app.router.add_get("/api/runs/{run}/event", _event)
    app.router.add_get("/api/runs/{run}/metrics", _metrics)
    app.router.add_get("/api/runs/{run}/divergent", _divergent)
    app.router.add_static("/static/", str(static), follow_symlinks=False)
    return app
