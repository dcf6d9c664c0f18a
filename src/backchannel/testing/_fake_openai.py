"""A fake OpenAI-compatible chat-completions server with a capacity model and scripted faults.

It stands in for a model server in tests and benchmarks: replies are deterministic, at most
`slots` requests are served at once (each taking `latency` seconds, the rest queue in arrival
order), and a fault script can make chosen requests fail. Counters and the recorded request
bodies let a test assert on what the client actually sent.

With `reasoning` set it answers as a reasoning model does, in one of the shapes servers use:
think tags in the content (`think_tags`; `opened_by_template` leaves out the opening tag, as
DeepSeek-R1 templates do), or a separate message field (`reasoning_content` as vLLM and
SGLang send it, `reasoning` as some routers do, both with `completion_tokens_details`). It then
honours `max_tokens` (one word is one token): reasoning comes first, so a small budget ends
the completion inside its reasoning with finish reason `length`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, Literal, get_args

from backchannel.testing._faults import (
    BodyFault,
    DelayFault,
    DisconnectFault,
    Fault,
    StatusFault,
    TrickleFault,
    parse_script,
)
from backchannel.testing._schema import UnsupportedSchemaError, minimal_instance

try:
    from aiohttp import web
except ImportError as error:  # pragma: no cover - aiohttp ships with the dev extra
    raise ImportError(
        "backchannel.testing needs aiohttp; install it with: pip install 'backchannel[dev]'"
    ) from error

Responder = Callable[[dict[str, Any]], str]
Reasoner = Callable[[dict[str, Any]], str]
ReasoningShape = Literal["think_tags", "opened_by_template", "reasoning_content", "reasoning"]
REASONING_SHAPES: tuple[str, ...] = get_args(ReasoningShape)

_STATUS_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Bad request."),
    401: ("invalid_request_error", "Incorrect API key provided."),
    429: ("rate_limit_error", "Rate limit reached for requests."),
    500: ("server_error", "The server had an error while processing your request."),
    503: ("server_error", "The engine is currently overloaded, please try again later."),
}


def error_body(status: int, message: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error payload for `status`."""
    kind, default = _STATUS_ERRORS.get(status, ("server_error", f"HTTP {status}."))
    return {"error": {"message": message or default, "type": kind, "param": None, "code": code}}


def request_digest(body: dict[str, Any]) -> str:
    """A stable hex digest of a request body (key order does not matter)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def default_content(body: dict[str, Any]) -> str:
    """Deterministic reply: a JSON object for a json_schema request, else a hash-derived line."""
    digest = request_digest(body)
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError("response_format.json_schema.schema is missing")
        return json.dumps(minimal_instance(schema, seed=int(digest[:8], 16)))
    if response_format.get("type") == "json_object":
        return json.dumps({"reply": digest[:12]})
    return f"Reply {digest[:12]}."


def default_reasoning(body: dict[str, Any]) -> str:
    """Deterministic reasoning of eight words, unique to the request."""
    return f"Private reasoning {request_digest(body)[:12]}: the answer follows from this."


def _count_tokens(text: str) -> int:
    return len(text.split())


def _budget(body: dict[str, Any]) -> int | None:
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return value if isinstance(value, int) and value > 0 else None


def _reasoning_message(
    shape: ReasoningShape, reasoning: str, content: str, budget: int | None
) -> tuple[dict[str, Any], str, int, int]:
    """(message, finish reason, completion tokens, reasoning tokens) of a reasoning model that
    thinks `reasoning` and then answers `content`, cut off after `budget` words."""
    thought, answer = reasoning.split(), content.split()
    finish = "stop"
    closed = True
    if budget is not None and len(thought) >= budget:
        thought, answer, closed, finish = thought[:budget], [], False, "length"
        content = ""
    elif budget is not None and len(thought) + len(answer) > budget:
        answer, finish = answer[: budget - len(thought)], "length"
        content = " ".join(answer)
    reasoning = " ".join(thought)
    tokens = len(thought) + len(answer)
    if shape in ("reasoning_content", "reasoning"):
        message = {"role": "assistant", "content": content or None, shape: reasoning}
        return message, finish, tokens, len(thought)
    opening = "<think>\n" if shape == "think_tags" else ""
    closing = f"\n</think>\n\n{content}" if closed else ""
    return {"role": "assistant", "content": opening + reasoning + closing}, finish, tokens, 0


class FakeOpenAIServer:
    """An in-process fake of `/v1/chat/completions` and `/v1/models` on 127.0.0.1.

    Use it as ``async with FakeOpenAIServer(latency=0.05, slots=4) as server:`` and point a
    client at ``server.base_url``.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        slots: int = 8,
        models: Sequence[str] = ("fake-model",),
        responder: Responder | None = None,
        faults: Iterable[Any] = (),
        require_api_key: str | None = None,
        port: int = 0,
        reasoning: ReasoningShape | None = None,
        reasoner: Reasoner | None = None,
        max_queue: int | None = None,
    ) -> None:
        if max_queue is not None and max_queue < 0:
            raise ValueError("max_queue must be >= 0")
        self.max_queue = max_queue
        """Requests waiting beyond this many are answered 429 at once (None: queue them all)."""
        self.rate_limited = 0
        """Requests answered 429 because the queue was full."""
        if latency < 0:
            raise ValueError("latency must be >= 0")
        if slots < 1:
            raise ValueError("slots must be >= 1")
        if not models:
            raise ValueError("at least one model name is needed")
        if reasoning is not None and reasoning not in REASONING_SHAPES:
            raise ValueError(
                f"unknown reasoning shape {reasoning!r}; use one of {', '.join(REASONING_SHAPES)}"
            )
        self.reasoning: ReasoningShape | None = reasoning
        self._reasoner = reasoner or default_reasoning
        self.latency = latency
        self.slots = slots
        self.models = tuple(models)
        self._responder = responder or default_content
        self._faults: list[Fault | None] = parse_script(faults)
        self._require_api_key = require_api_key
        self._port = port
        self._runner: web.AppRunner | None = None
        self._gate = _Capacity(slots)
        self._base_url: str | None = None
        self.requests: list[dict[str, Any]] = []
        """Every chat-completions request body received, in arrival order (faulted ones too)."""
        self.requests_served = 0
        """Chat-completions requests answered with 200."""
        self.max_concurrency = 0
        """The most requests ever in service at once (never more than `slots`)."""
        self.max_in_flight = 0
        """The most requests ever received and not yet answered (in service plus queued)."""
        self._in_service = 0
        self._in_flight = 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; available once the server has started."""
        if self._base_url is None:
            raise RuntimeError("the server has not been started")
        return self._base_url

    @property
    def faults_remaining(self) -> int:
        """How many scripted faults have not been consumed yet."""
        return len(self._faults)

    async def start(self) -> None:
        """Bind to a port on 127.0.0.1 and start serving."""
        if self._runner is not None:
            raise RuntimeError("the server is already running")
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._list_models)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/capacity", self._capacity)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self._port)
        await site.start()
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self._base_url = f"http://{host}:{port}/v1"

    async def stop(self) -> None:
        """Stop serving and release the port."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    def set_slots(self, slots: int) -> None:
        """Change the capacity mid-run (also `POST /capacity {"slots": N}`): more slots admit
        queued requests at once; fewer take effect as requests in service finish."""
        if slots < 1:
            raise ValueError("slots must be >= 1")
        self.slots = slots
        self._gate.resize(slots)

    async def _capacity(self, request: web.Request) -> web.Response:
        body = await request.json()
        slots = body.get("slots") if isinstance(body, dict) else None
        if not isinstance(slots, int) or slots < 1:
            return web.json_response(error_body(400, "'slots' must be an integer >= 1"), status=400)
        self.set_slots(slots)
        return web.json_response(self.stats())

    def stats(self) -> dict[str, int]:
        """The counters as a plain dict (also served at ``GET /stats``)."""
        return {
            "requests_received": len(self.requests),
            "requests_served": self.requests_served,
            "max_concurrency": self.max_concurrency,
            "max_in_flight": self.max_in_flight,
            "slots": self.slots,
            "rate_limited": self.rate_limited,
        }

    def _authorised(self, request: web.Request) -> bool:
        if self._require_api_key is None:
            return True
        return request.headers.get("Authorization") == f"Bearer {self._require_api_key}"

    async def _list_models(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return web.json_response(error_body(401, code="invalid_api_key"), status=401)
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "backchannel"}
            for name in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        if not self._authorised(request):
            return web.json_response(error_body(401, code="invalid_api_key"), status=401)
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response(error_body(400, "The body is not valid JSON."), status=400)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return web.json_response(error_body(400, "'messages' is required."), status=400)
        if body.get("stream"):
            return web.json_response(error_body(400, "Streaming is not supported."), status=400)
        self.requests.append(body)
        fault = self._faults.pop(0) if self._faults else None
        if isinstance(fault, StatusFault):
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            return web.json_response(error_body(fault.status), status=fault.status, headers=headers)
        if isinstance(fault, DisconnectFault):
            return self._disconnect(request)
        if isinstance(fault, BodyFault):
            if isinstance(fault.body, bytes):
                return web.Response(body=fault.body, content_type=fault.content_type)
            return web.Response(text=fault.body, content_type=fault.content_type)
        extra_delay = fault.seconds if isinstance(fault, DelayFault) else 0.0
        answer = await self._serve(body, extra_delay)
        if isinstance(fault, TrickleFault) and answer.status == 200:
            return await self._trickle(request, answer, fault.seconds)
        return answer

    async def _trickle(
        self, request: web.Request, answer: web.Response, seconds: float
    ) -> web.StreamResponse:
        """Send `answer`'s body in 20 pieces spread over `seconds` (its length announced first,
        so the client waits for every piece)."""
        data = answer.body if isinstance(answer.body, bytes) else b""
        stream = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        stream.content_length = len(data)
        await stream.prepare(request)
        pieces = 20
        step = max(1, -(-len(data) // pieces))
        try:
            for start in range(0, len(data), step):
                await asyncio.sleep(seconds / pieces)
                await stream.write(data[start : start + step])
            await stream.write_eof()
        except ConnectionResetError:
            pass  # the client gave up waiting: what a trickled body is for
        return stream

    def _disconnect(self, request: web.Request) -> web.StreamResponse:
        """Close the socket with nothing written, as a crashed server or a proxy reset would."""
        if request.transport is not None:
            request.transport.close()
        return web.Response(status=500)  # never written: the socket is already closed

    async def _serve(self, body: dict[str, Any], extra_delay: float) -> web.Response:
        queued = self._in_flight - self._in_service
        full = self._in_service >= self.slots
        if self.max_queue is not None and full and queued >= self.max_queue:
            self.rate_limited += 1
            return web.json_response(error_body(429), status=429)
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            async with self._gate:
                self._in_service += 1
                self.max_concurrency = max(self.max_concurrency, self._in_service)
                try:
                    await asyncio.sleep(self.latency + extra_delay)
                    try:
                        content = self._responder(body)
                    except UnsupportedSchemaError as error:
                        return web.json_response(error_body(400, str(error)), status=400)
                finally:
                    self._in_service -= 1
        finally:
            self._in_flight -= 1
        self.requests_served += 1
        return web.json_response(self._completion(body, content))

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        prompt_tokens = sum(
            _count_tokens(str(message.get("content") or ""))
            for message in body["messages"]
            if isinstance(message, dict)
        )
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish_reason = "stop"
        completion_tokens = _count_tokens(content)
        usage: dict[str, Any] = {}
        if self.reasoning is not None:
            message, finish_reason, completion_tokens, reasoning_tokens = _reasoning_message(
                self.reasoning, self._reasoner(body), content, _budget(body)
            )
            if reasoning_tokens:
                usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        return {
            "id": f"chatcmpl-{request_digest(body)[:24]}-{self.requests_served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.models[0]),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **usage,
            },
        }


class _Capacity:
    """A semaphore whose size can change while requests wait (arrival order kept)."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.busy = 0
        self._waiters: list[asyncio.Future[None]] = []

    def resize(self, slots: int) -> None:
        self.slots = slots
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.busy < self.slots:
            future = self._waiters.pop(0)
            if not future.done():
                self.busy += 1
                future.set_result(None)

    async def __aenter__(self) -> None:
        if self.busy < self.slots and not self._waiters:
            self.busy += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.busy -= 1
                self._wake()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self.busy -= 1
        self._wake()
