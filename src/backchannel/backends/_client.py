"""The client the engine calls: routes a request to its endpoint's wrapped backend, parses the
answer under its constraint, re-asks a bounded number of times, and accounts for usage.

Per-model defaults (reasoning effort, stop, extra body) go under the request before the cache
sees it, so they are part of its key; the reasoning is split from the answer after it, here,
once for every backend: only the answer is parsed, re-asked about and returned as `text`.

Order of concern around every raw backend: cache (a hit takes no slot) -> in-flight limit ->
retries. Accounting and parsing sit on top, so every re-ask is its own cached call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from backchannel.backends._base import Backend
from backchannel.backends._constraints import format_instruction, parse, reask_instruction
from backchannel.backends._errors import FatalBackendError, RequestRejected, TransientBackendError
from backchannel.backends._profile import ModelSettings
from backchannel.backends._reasoning import split_reasoning
from backchannel.backends._replicas import (
    Affinity,
    ReplicaStats,
    ReplicatedBackend,
    conversation_affinity,
)
from backchannel.backends._types import (
    Completion,
    Message,
    RawCompletion,
    Request,
    Status,
    add_timings,
)
from backchannel.backends._usage import Price, Usage, UsageMeter
from backchannel.errors import BackendUnavailable


@dataclass(frozen=True, slots=True)
class Route:
    """The wrapped backend serving one model, that model's price and its call defaults (the
    endpoint's extra body already merged under the model's)."""

    backend: Backend
    price: Price = Price()
    defaults: ModelSettings = ModelSettings()


class LLMClient:
    """One per run: every model call of every conversation goes through `generate`."""

    def __init__(
        self,
        routes: dict[str, Route],
        *,
        max_reasks: int = 2,
        replica_sets: Sequence[ReplicatedBackend] = (),
    ) -> None:
        self._routes = routes
        self._max_reasks = max_reasks
        self._replica_sets = tuple(replica_sets)
        self.usage = UsageMeter()

    @contextlib.contextmanager
    def conversation(self, key: str) -> Iterator[Affinity]:
        """Keep the calls made inside to one replica per endpoint; yields their per-replica
        counts."""
        with conversation_affinity(key) as affinity:
            yield affinity

    def replica_stats(self) -> list[ReplicaStats]:
        """Calls, failures, in-flight calls and health of every replica (empty without any)."""
        return [stats for replicas in self._replica_sets for stats in replicas.stats()]

    def route(self, model: str) -> Route:
        try:
            return self._routes[model]
        except KeyError:
            raise BackendUnavailable(f"no backend was set up for model {model!r}") from None

    def own_reasoning(self, model: str) -> bool:
        """Whether agents of `model` see their own earlier reasoning by default."""
        route = self._routes.get(model)
        return route is not None and route.defaults.own_reasoning

    async def generate(self, request: Request, meter: UsageMeter | None = None) -> Completion:
        """Ask, parse, re-ask on unreadable answers; failures come back as data, not exceptions.

        A constraint adds one format sentence to the last user message. An empty answer is
        unreadable too. Raises BackendUnavailable only when the endpoint cannot serve anything
        (unreachable, refused key, unknown model).
        """
        route = self.route(request.model)
        request = route.defaults.apply(request)
        meters = [self.usage.model(request.model)]
        if meter is not None:
            meters.append(meter.model(request.model))
        messages = list(request.messages)
        if request.constraint is not None:
            last = messages[-1]
            messages[-1] = Message(
                last.role, f"{last.content}\n\n{format_instruction(request.constraint)}"
            )
        tally = _Tally(request.model)
        text, reasoning, error = "", "", "no answer"
        for attempt in range(self._max_reasks + 1):
            tally.attempts = attempt + 1
            attempt_request = replace(request, messages=tuple(messages), attempt=attempt)
            tally.prompt = attempt_request.messages
            try:
                raw = await route.backend.generate(attempt_request)
            except TransientBackendError as failure:
                retried = getattr(failure, "retries", 0)
                spent = f"{retried} retries in {getattr(failure, 'waited_s', 0.0):.0f} s"
                _count(meters, calls=1, retries=retried, failures=1)
                if failure.connection:
                    raise BackendUnavailable(
                        f"{failure}: the server is unreachable after {spent}; start it "
                        "or fix the endpoint's base_url (or OPENAI_BASE_URL)"
                    ) from failure
                tally.retries += retried
                return tally.completion(
                    "", None, "error", f"{failure} (after {spent})", cached=False
                )
            except RequestRejected as failure:
                _count(meters, calls=1, failures=1)
                return tally.completion("", None, "error", str(failure), cached=False)
            except FatalBackendError as failure:
                raise BackendUnavailable(str(failure)) from failure
            cost = 0.0 if raw.cached else route.price.cost(raw.prompt_tokens, raw.completion_tokens)
            _count(
                meters,
                calls=1,
                cache_hits=int(raw.cached),
                prompt_tokens=raw.prompt_tokens,
                completion_tokens=raw.completion_tokens,
                retries=raw.retries,
                reasks=int(attempt > 0),
                cost=cost,
                reasoning_tokens=raw.reasoning_tokens,
            )
            tally.add(raw)
            split = split_reasoning(raw.text, raw.reasoning, route.defaults.think_tags)
            text, reasoning = split.answer, split.reasoning
            tally.reasoning = reasoning
            if raw.finish_reason == "content_filter":
                return tally.completion(
                    text, None, "refusal", "the server's content filter stopped the answer"
                )
            if raw.finish_reason == "length" and (split.unterminated or (reasoning and not text)):
                # Asking again would stop at the same place: this is a budget, not a reading,
                # problem.
                _count(meters, truncated=1)
                return tally.completion(
                    text,
                    None,
                    "truncated",
                    f"the completion reached max_tokens ({request.settings.max_tokens}) inside "
                    "its reasoning, before any answer; raise max_tokens to leave room for the "
                    "answer, or lower reasoning_effort",
                )
            parsed = parse(text, request.constraint)
            if parsed.ok:
                return tally.completion(text, parsed.value, "ok")
            error = parsed.error or "unreadable answer"
            messages = [
                *messages,
                Message("assistant", text),
                Message("user", reask_instruction(request.constraint, error)),
            ]
        _count(meters, parse_failures=1)
        return tally.completion(text, None, "parse_failure", error)

    async def aclose(self) -> None:
        closed: set[int] = set()
        for route in self._routes.values():
            if id(route.backend) not in closed:
                closed.add(id(route.backend))
                await route.backend.aclose()


@dataclass
class _Tally:
    """What the attempts of one call add up to."""

    model: str
    attempts: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    latency_s: float = 0.0
    cached: bool = True
    reasoning: str = ""
    reasoning_tokens: int = 0
    prompt: tuple[Message, ...] = ()
    timings: Mapping[str, float] | None = None

    def add(self, raw: RawCompletion) -> None:
        self.timings = add_timings(self.timings, raw.timings)
        self.prompt_tokens += raw.prompt_tokens
        self.completion_tokens += raw.completion_tokens
        self.reasoning_tokens += raw.reasoning_tokens
        self.retries += raw.retries
        self.latency_s += raw.latency_s
        self.cached = self.cached and raw.cached

    def completion(
        self,
        text: str,
        value: Any,
        status: Status,
        error: str | None = None,
        *,
        cached: bool | None = None,
    ) -> Completion:
        return Completion(
            text=text,
            value=value,
            status=status,
            model=self.model,
            error=error,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            latency_s=self.latency_s,
            cached=self.cached if cached is None else cached,
            attempts=self.attempts,
            retries=self.retries,
            reasoning=self.reasoning,
            reasoning_tokens=self.reasoning_tokens,
            prompt=self.prompt,
            timings=self.timings,
        )


def _count(meters: list[Usage], **increments: float) -> None:
    for meter in meters:
        for name, amount in increments.items():
            setattr(meter, name, getattr(meter, name) + amount)
