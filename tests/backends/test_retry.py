"""Retries are bounded by a total wait per call, not a small count; backoff is exponential with
full jitter; Retry-After is honoured; 200 bodies that are not chat completions are transient."""

from __future__ import annotations

import random
from typing import Any

import pytest

from backchannel.backends import Message, RawCompletion, Request, RetryPolicy
from backchannel.backends._errors import TransientBackendError
from backchannel.backends._openai import OpenAIBackend
from backchannel.backends._retry import RetryingBackend
from backchannel.testing import FakeOpenAIServer

REQUEST = Request("openai/fake-model", (Message("user", "Hello?"),), seed=1)


class Clock:
    """A virtual clock: sleeping advances it, so tests check waits without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Flaky:
    """Fails the first `failures` calls with a transient error, then answers."""

    endpoint = "flaky"

    def __init__(self, failures: int, retry_after: float | None = None) -> None:
        self.failures = failures
        self.retry_after = retry_after
        self.calls = 0

    async def generate(self, request: Request) -> RawCompletion:
        self.calls += 1
        if self.calls <= self.failures:
            raise TransientBackendError("server error 500 from flaky", retry_after=self.retry_after)
        return RawCompletion("fine")

    async def aclose(self) -> None:
        return None


def retrying(inner: Any, policy: RetryPolicy, clock: Clock) -> RetryingBackend:
    return RetryingBackend(inner, policy, clock=clock, sleep=clock.sleep)


async def test_many_failures_within_the_wait_bound_still_succeed() -> None:
    # 40 failures in a row: far more than any small count, well within 300 s of 1 s waits.
    clock, inner = Clock(), Flaky(40)
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=1.0, max_wait_s=300.0)
    completion = await retrying(inner, policy, clock).generate(REQUEST)
    assert completion.text == "fine"
    assert completion.retries == 40
    assert inner.calls == 41
    assert clock.now == pytest.approx(sum(clock.sleeps)) and clock.now <= 40.0


async def test_the_total_wait_bounds_retries_and_the_error_says_how_many() -> None:
    clock, inner = Clock(), Flaky(10**6)
    policy = RetryPolicy(base_delay_s=10.0, max_delay_s=10.0, max_wait_s=60.0)
    with pytest.raises(TransientBackendError) as raised:
        await retrying(inner, policy, clock).generate(REQUEST)
    # Never waits past the bound: the next delay would have crossed 60 s.
    assert sum(clock.sleeps) <= 60.0
    assert raised.value.retries == len(clock.sleeps) == inner.calls - 1  # type: ignore[attr-defined]
    assert raised.value.waited_s == pytest.approx(sum(clock.sleeps))  # type: ignore[attr-defined]


async def test_max_retries_is_an_optional_extra_cap() -> None:
    clock, inner = Clock(), Flaky(10)
    with pytest.raises(TransientBackendError):
        await retrying(inner, RetryPolicy(max_retries=2, max_wait_s=1e9), clock).generate(REQUEST)
    assert inner.calls == 3


async def test_retry_after_is_honoured_up_to_its_cap() -> None:
    clock, inner = Clock(), Flaky(2, retry_after=7.0)
    policy = RetryPolicy(base_delay_s=0.0, max_delay_s=0.0, max_retry_after_s=5.0)
    await retrying(inner, policy, clock).generate(REQUEST)
    assert clock.sleeps == [5.0, 5.0]


def test_backoff_is_exponential_with_full_jitter_under_the_cap() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=4.0)
    rng = random.Random(3)
    for retry, cap in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (10, 4.0), (500, 4.0)]:
        delays = [policy.delay(retry, None, rng) for _ in range(200)]
        assert all(0 <= d <= cap for d in delays)
        assert max(delays) > 0.8 * cap  # jitter spreads over the whole interval
    assert policy.delay(0, 3.0, rng) == 3.0  # never sooner than the server asked


@pytest.mark.parametrize("bad", [{"max_wait_s": -1}, {"max_retries": -1}, {"base_delay_s": -0.1}])
def test_negative_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (("truncated",), "answered 200 with a body that is not valid JSON"),
        (("body", "", "application/json"), "answered 200 with a body that is not valid JSON"),
        (("html",), "answered 200 with a body that is not a chat completion"),
        (("empty_choices",), "not a chat completion \\(no choices\\)"),
    ],
)
async def test_bodies_that_are_not_completions_are_transient_and_name_the_endpoint(
    fault: tuple[Any, ...], message: str
) -> None:
    async with FakeOpenAIServer(faults=[fault]) as server:
        backend = OpenAIBackend(base_url=server.base_url, api_key="k")
        try:
            with pytest.raises(TransientBackendError, match=message) as raised:
                await backend.generate(REQUEST)
            assert server.base_url in str(raised.value)
            # The next request is served normally.
            assert (await backend.generate(REQUEST)).text
        finally:
            await backend.aclose()


async def test_a_truncated_body_is_retried_to_success() -> None:
    async with FakeOpenAIServer(faults=[("truncated",), ("html",), ("empty_choices",)]) as server:
        inner = OpenAIBackend(base_url=server.base_url, api_key="k")
        backend = RetryingBackend(inner, RetryPolicy(base_delay_s=0.0, max_delay_s=0.0))
        try:
            completion = await backend.generate(REQUEST)
        finally:
            await backend.aclose()
    assert completion.retries == 3 and completion.text
