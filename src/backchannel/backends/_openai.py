"""OpenAI-compatible servers through the official async `openai` SDK.

One `AsyncOpenAI` client (and connection pool) per endpoint, kept for the whole run. The SDK's own
retries are off: retrying is the retry wrapper's concern. The SDK's aiohttp transport
(`DefaultAioHttpClient`) carries the calls: it costs about half the client CPU per call of the
default httpx transport, whose connection pool checks every idle socket on every request.

Calls go through the SDK's generic `post` with the body `chat.completions.create` would send
(same keys, same order) and come back as the decoded JSON: `create` spends about 0.3 ms per call
transforming an already plain body and 0.1 ms building pydantic models we only read three
fields from. Authentication, headers and status errors are the SDK's as before.

The SDK's timeout bounds each wait between two reads, so a server that trickles its body keeps
a call open as long as it likes: `timeout_s` bounds the whole call here (connect, wait, body).
A 200 whose body cannot be used (not decodable, not JSON, not shaped like a chat completion) is
a transient fault of the transport, retried like a 500, and its message names the endpoint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import aiohttp
import httpx2
import openai

from backchannel._secrets import scrub
from backchannel.backends._constraints import gbnf_grammar, json_schema_for
from backchannel.backends._errors import (
    FatalBackendError,
    RequestRejected,
    TransientBackendError,
)
from backchannel.backends._types import SERVER_TIMINGS, JsonSchema, RawCompletion, Request
from backchannel.backends._urls import shown_url

ConstrainedDecoding = Literal["json_schema", "grammar", "none"]

_PATH = "/chat/completions"
# What `chat.completions.create` asks of the SDK's request machinery: bearer-token auth only.
_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}


def _reasoning_of(message: dict[str, Any]) -> str:
    """The server's separate reasoning field: `reasoning_content` (vLLM, SGLang, DeepSeek) or
    `reasoning` (some routers and newer vLLM)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _timings(data: dict[str, Any]) -> dict[str, float] | None:
    """A llama.cpp server's `timings` of the call (the `SERVER_TIMINGS` keys), or None when the
    server sends none or an incomplete one."""
    timings = data.get("timings")
    if not isinstance(timings, dict):
        return None
    kept: dict[str, float] = {}
    for key in SERVER_TIMINGS:
        value = timings.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        kept[key] = round(float(value), 3)
    return kept


class _Unusable(Exception):
    """A 200 body that is not a usable chat completion; the message says what is wrong."""


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Unusable(f"usage.{key} is {value!r}, not a token count")
    return value


def _text_field(message: dict[str, Any], key: str) -> str:
    value = message.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Unusable(f"message.{key} is {type(value).__name__}, not text")
    return value


def _parse_completion(data: object, latency: float) -> RawCompletion:
    """The first choice's text, reasoning, finish reason and the usage of a decoded chat
    completion; raises _Unusable for any body of another shape."""
    if not isinstance(data, dict):
        raise _Unusable(f"the body is {_describe(data)}, not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _Unusable("no choices")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise _Unusable(f"choices[0] is {_describe(choice)}, not an object")
    message = choice.get("message")
    if message is None:
        message = {}
    if not isinstance(message, dict):
        raise _Unusable(f"choices[0].message is {_describe(message)}, not an object")
    usage = data.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise _Unusable(f"usage is {_describe(usage)}, not an object")
    finish_reason = choice.get("finish_reason") or "stop"
    if not isinstance(finish_reason, str):
        raise _Unusable(f"finish_reason is {_describe(finish_reason)}, not text")
    content, refusal = _text_field(message, "content"), _text_field(message, "refusal")
    if refusal:
        # The model declined through the API's refusal field: a refusal, not an empty answer.
        finish_reason = "content_filter"
    details = usage.get("completion_tokens_details")
    return RawCompletion(
        text=content or refusal,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        latency_s=latency,
        finish_reason=finish_reason,
        reasoning=_reasoning_of(message),
        reasoning_tokens=_count(details, "reasoning_tokens") if isinstance(details, dict) else 0,
        timings=_timings(data),
    )


def _completion(data: object, endpoint: str, latency: float) -> RawCompletion:
    """`_parse_completion`, an unusable body a transient fault naming the endpoint."""
    try:
        return _parse_completion(data, latency)
    except _Unusable as error:
        raise TransientBackendError(
            f"{endpoint} answered 200 with a body that is not a chat completion ({error})"
        ) from None


def _describe(value: object) -> str:
    """A short, safe description of a decoded value: its JSON type and where text, its start."""
    if value is None:
        return "JSON null"
    if isinstance(value, str):
        return f"text starting {value[:40]!r}"
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list"}.get(
        type(value), type(value).__name__
    )


def _unreadable_body(error: BaseException) -> str | None:
    """Why the body of an answer could not be read (a broken compression, a body cut off
    mid-way), when that is what the SDK reports as a connection error; else None."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, httpx2.DecodingError | aiohttp.ClientPayloadError):
            return str(cause).splitlines()[0][:120] if str(cause) else type(cause).__name__
        cause = cause.__cause__
    return None


def _connection_lost(error: BaseException) -> bool:
    """Whether a timeout the SDK reports is really a refused, failed or dropped connection.

    The SDK's aiohttp transport maps every aiohttp connection error to a connect timeout; the
    httpx transport called these connection errors, and so do we.
    """
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(
            cause, aiohttp.ServerTimeoutError
        ):
            return True
        cause = cause.__cause__
    return False


def _retry_after(error: openai.APIStatusError) -> float | None:
    header = error.response.headers.get("retry-after") if error.response is not None else None
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        return None


class OpenAIBackend:
    """Chat completions against `base_url`; `model_name` is the part after `openai/`."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 120.0,
        constrained: ConstrainedDecoding = "json_schema",
    ) -> None:
        self._base_url = base_url
        self._constrained = constrained
        self._timeout_s = timeout_s
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=0,
            timeout=timeout_s,
            http_client=openai.DefaultAioHttpClient(),
        )
        # Shown in messages and stored with failures: no user:secret@ part, no query string.
        self._endpoint = shown_url(str(self._client.base_url))

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def _body(self, request: Request) -> dict[str, Any]:
        """The JSON body, keys in the order `chat.completions.create` writes them (its
        `extra_body` last)."""
        settings = request.settings
        body: dict[str, Any] = {
            "model": request.model.split("/", 1)[1],
            "messages": [m.as_dict() for m in request.messages],
            settings.max_tokens_field: settings.max_tokens,
        }
        if settings.reasoning_effort is not None:
            body["reasoning_effort"] = settings.reasoning_effort
        constraint = request.constraint
        grammar = None
        if constraint is not None and self._constrained != "none":
            if self._constrained == "grammar":
                grammar = gbnf_grammar(constraint)
            if grammar is None and isinstance(constraint, JsonSchema):
                schema = json_schema_for(constraint)
                if schema is not None:
                    body["response_format"] = {
                        "type": "json_schema",
                        "json_schema": {"name": constraint.name, "schema": schema},
                    }
        body["seed"] = request.seed
        if settings.stop:
            body["stop"] = list(settings.stop)
        if settings.sampling:
            body["temperature"] = settings.temperature
            body["top_p"] = settings.top_p
        # What the SDK's `extra_body` does: extra keys after the typed ones.
        body.update(settings.extra_body)
        if grammar is not None:
            body["grammar"] = grammar
        return body

    async def _bounded(self, call: Callable[[], Awaitable[object]]) -> object:
        """`call()` within `timeout_s` from connect to the body's last byte."""
        try:
            async with asyncio.timeout(self._timeout_s):
                return await call()
        except TimeoutError as error:
            raise TransientBackendError(
                f"{self.endpoint} did not answer within the endpoint's timeout_s "
                f"({self._timeout_s:g} s)"
            ) from error

    async def generate(self, request: Request) -> RawCompletion:
        body = self._body(request)
        started = time.perf_counter()
        try:
            data = await self._bounded(
                lambda: self._client.post(_PATH, body=body, cast_to=object, options=_OPTIONS)
            )
        except openai.RateLimitError as error:
            raise TransientBackendError(
                f"rate limited (429) by {self.endpoint}", retry_after=_retry_after(error)
            ) from error
        except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
            raise FatalBackendError(
                f"{self.endpoint} refused the API key ({error.status_code}); set the right key in "
                "the experiment file's endpoint `api_key_env` variable or OPENAI_API_KEY"
            ) from error
        except openai.NotFoundError as error:
            raise FatalBackendError(
                f"{self.endpoint} does not serve model {body['model']!r} (404); check the model "
                "name and the endpoint's base_url"
            ) from error
        except openai.BadRequestError as error:
            raise RequestRejected(
                f"{self.endpoint} rejected the request: {scrub(error.message)}"
            ) from error
        except openai.APIStatusError as error:
            if error.status_code >= 500 or error.status_code in (408, 409):
                raise TransientBackendError(
                    f"server error {error.status_code} from {self.endpoint}",
                    retry_after=_retry_after(error),
                ) from error
            raise RequestRejected(
                f"{self.endpoint} answered {error.status_code}: {scrub(error.message)}"
            ) from error
        except openai.APITimeoutError as error:
            if _connection_lost(error):
                raise TransientBackendError(
                    f"cannot connect to {self.endpoint}", connection=True
                ) from error
            raise TransientBackendError(f"timed out waiting for {self.endpoint}") from error
        except openai.APIConnectionError as error:
            unreadable = _unreadable_body(error)
            if unreadable is not None:
                # The server answered; its body was cut off or its compression broken.
                raise TransientBackendError(
                    f"{self.endpoint} sent an answer whose body could not be read ({unreadable})"
                ) from error
            raise TransientBackendError(
                f"cannot connect to {self.endpoint}", connection=True
            ) from error
        except (ValueError, RecursionError) as error:
            # A 200 whose body is not UTF-8 text or not JSON (cut off, garbled, nested beyond
            # what the decoder takes): the server or a proxy failed mid-way. UnicodeDecodeError
            # and JSONDecodeError are both ValueErrors.
            raise TransientBackendError(
                f"{self.endpoint} answered 200 with a body that is not valid JSON "
                f"({type(error).__name__}: {str(error)[:120]})"
            ) from error
        return _completion(data, self.endpoint, time.perf_counter() - started)

    async def check_reachable(self) -> None:
        """One cheap request (`GET /models`) before a run writes anything: raises
        TransientBackendError(connection=True) when nothing answers, FatalBackendError when the
        key is refused or nothing OpenAI-compatible is served at the base URL (404: most often
        a missing /v1). Any other answer, even an error status, means the server is there."""
        try:
            await self._bounded(
                lambda: self._client.get("/models", cast_to=object, options=_OPTIONS)
            )
        except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
            raise FatalBackendError(
                f"{self.endpoint} refused the API key ({error.status_code}); set the right key in "
                "the experiment file's endpoint `api_key_env` variable or OPENAI_API_KEY"
            ) from error
        except openai.NotFoundError as error:
            raise FatalBackendError(
                f"{self.endpoint} answered 404 to GET {self.endpoint.rstrip('/')}/models: no "
                "OpenAI-compatible API is served at this base_url; such URLs usually end in /v1 "
                "(e.g. http://127.0.0.1:8000/v1)"
            ) from error
        except openai.APIStatusError:
            return
        except openai.APITimeoutError as error:
            if _connection_lost(error):
                raise TransientBackendError(
                    f"cannot connect to {self.endpoint}", connection=True
                ) from error
            raise TransientBackendError(
                f"{self.endpoint} did not answer within the endpoint's timeout_s", connection=True
            ) from error
        except openai.APIConnectionError as error:
            raise TransientBackendError(
                f"cannot connect to {self.endpoint}", connection=True
            ) from error
        except (ValueError, RecursionError):
            return  # an answer that is not JSON still comes from a running server

    async def probe(self) -> None:
        """Whether the server answers at all (`GET /models`); TransientBackendError if not."""
        try:
            await self._bounded(
                lambda: self._client.get("/models", cast_to=object, options=_OPTIONS)
            )
        except openai.APIError as error:
            raise TransientBackendError(f"{self.endpoint} does not answer: {error}") from error
        except (ValueError, RecursionError):
            return  # a body that is not JSON still comes from a running server

    async def aclose(self) -> None:
        await self._client.close()
