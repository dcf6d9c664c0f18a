"""The client the engine calls: routes a request to its endpoint's wrapped backend, parses the
answer under its constraint, re-asks a bounded number of times, and accounts for usage.

Order of concern around every raw backend: cache (a hit takes no slot) -> in-flight limit ->
retries. Accounting and parsing sit on top, so every re-ask is its own cached call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from backchannel.backends._base import Backend
from backchannel.backends._constraints import format_instruction, parse, reask_instruction
from backchannel.backends._errors import FatalBackendError, RequestRejected, TransientBackendError
from backchannel.backends._types import Completion, Message, Request
from backchannel.backends._usage import Price, UsageMeter
from backchannel.errors import BackendUnavailable


@dataclass(frozen=True, slots=True)
class Route:
    """The wrapped backend serving one model, and that model's price."""

    backend: Backend
    price: Price = Price()


class LLMClient:
    """One per run: every model call of every conversation goes through `generate`."""

    def __init__(self, routes: dict[str, Route], *, max_reasks: int = 2) -> None:
        self._routes = routes
        self._max_reasks = max_reasks
        self.usage = UsageMeter()

    def route(self, model: str) -> Route:
        try:
            return self._routes[model]
        except KeyError:
            raise BackendUnavailable(f"no backend was set up for model {model!r}") from None

    async def generate(self, request: Request, meter: UsageMeter | None = None) -> Completion:
        """Ask, parse, re-ask on unreadable answers; failures come back as data, not exceptions.

        A constraint adds one format sentence to the last user message. Raises BackendUnavailable
        only when the endpoint cannot serve anything (unreachable, refused key, unknown model).
        """
        route = self.route(request.model)
        meters = [self.usage.model(request.model)]
        if meter is not None:
            meters.append(meter.model(request.model))
        messages = list(request.messages)
        if request.constraint is not None:
            last = messages[-1]
            messages[-1] = Message(
                last.role, f"{last.content}\n\n{format_instruction(request.constraint)}"
            )
        prompt_tokens = completion_tokens = retries = 0
        latency = 0.0
        all_cached = True
        text, error = "", "no answer"
        for attempt in range(self._max_reasks + 1):
            attempt_request = replace(request, messages=tuple(messages), attempt=attempt)
            try:
                raw = await route.backend.generate(attempt_request)
            except TransientBackendError as failure:
                retried = getattr(failure, "retries", 0)
                for m in meters:
                    m.calls += 1
                    m.retries += retried
                    m.failures += 1
                if failure.connection:
                    raise BackendUnavailable(
                        f"{failure}: the server is unreachable after {retried} retries; start it "
                        "or fix the endpoint's base_url (or OPENAI_BASE_URL)"
                    ) from failure
                return Completion(
                    text="",
                    value=None,
                    status="error",
                    model=request.model,
                    error=str(failure),
                    attempts=attempt + 1,
                    retries=retries + retried,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            except RequestRejected as failure:
                for m in meters:
                    m.calls += 1
                    m.failures += 1
                return Completion(
                    text="",
                    value=None,
                    status="error",
                    model=request.model,
                    error=str(failure),
                    attempts=attempt + 1,
                    retries=retries,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            except FatalBackendError as failure:
                raise BackendUnavailable(str(failure)) from failure
            cost = route.price.cost(raw.prompt_tokens, raw.completion_tokens)
            for m in meters:
                m.calls += 1
                m.cache_hits += int(raw.cached)
                m.prompt_tokens += raw.prompt_tokens
                m.completion_tokens += raw.completion_tokens
                m.retries += raw.retries
                m.reasks += int(attempt > 0)
                m.cost += 0.0 if raw.cached else cost
            prompt_tokens += raw.prompt_tokens
            completion_tokens += raw.completion_tokens
            retries += raw.retries
            latency += raw.latency_s
            all_cached = all_cached and raw.cached
            text = raw.text
            if raw.finish_reason == "content_filter":
                return Completion(
                    text=text,
                    value=None,
                    status="refusal",
                    model=request.model,
                    error="the server's content filter stopped the answer",
                    attempts=attempt + 1,
                    retries=retries,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    cached=all_cached,
                )
            parsed = parse(text, request.constraint)
            if parsed.ok:
                return Completion(
                    text=text,
                    value=parsed.value,
                    status="ok",
                    model=request.model,
                    attempts=attempt + 1,
                    retries=retries,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    cached=all_cached,
                )
            error = parsed.error or "unreadable answer"
            assert request.constraint is not None
            messages = [
                *messages,
                Message("assistant", text),
                Message("user", reask_instruction(request.constraint, error)),
            ]
        for m in meters:
            m.parse_failures += 1
        return Completion(
            text=text,
            value=None,
            status="parse_failure",
            model=request.model,
            error=error,
            attempts=self._max_reasks + 1,
            retries=retries,
            latency_s=latency,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached=all_cached,
        )

    async def aclose(self) -> None:
        closed: set[int] = set()
        for route in self._routes.values():
            if id(route.backend) not in closed:
                closed.add(id(route.backend))
                await route.backend.aclose()
