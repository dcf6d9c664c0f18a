"""The priority limiter: bounded slots, critical waiters first, arrival order within a class."""

from __future__ import annotations

import asyncio

import pytest

from backchannel.backends import PriorityLimiter


async def test_critical_waiters_are_admitted_before_non_critical_ones() -> None:
    limiter = PriorityLimiter(1)
    admitted: list[str] = []
    await limiter.acquire(critical=True)  # the only slot is taken

    async def wait(name: str, critical: bool) -> None:
        await limiter.acquire(critical)
        admitted.append(name)
        await asyncio.sleep(0)
        limiter.release()

    # Arrival order: two probes, then two turns, then a probe.
    tasks = []
    for name, critical in [("p1", False), ("p2", False), ("t1", True), ("t2", True), ("p3", False)]:
        tasks.append(asyncio.create_task(wait(name, critical)))
        await asyncio.sleep(0)
    assert admitted == []
    limiter.release()
    await asyncio.gather(*tasks)
    assert admitted == ["t1", "t2", "p1", "p2", "p3"]
    assert limiter.in_use == 0


async def test_never_more_than_the_limit_in_use() -> None:
    limiter = PriorityLimiter(3)
    peak = 0

    async def work(critical: bool) -> None:
        nonlocal peak
        await limiter.acquire(critical)
        peak = max(peak, limiter.in_use)
        await asyncio.sleep(0.001)
        limiter.release()

    await asyncio.gather(*(work(i % 2 == 0) for i in range(20)))
    assert peak == 3 and limiter.in_use == 0


async def test_a_cancelled_waiter_gives_its_slot_on() -> None:
    limiter = PriorityLimiter(1)
    await limiter.acquire(critical=True)
    cancelled = asyncio.create_task(limiter.acquire(critical=True))
    later = asyncio.create_task(limiter.acquire(critical=False))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    limiter.release()
    await asyncio.wait_for(later, 1)
    assert limiter.in_use == 1
    limiter.release()
    assert limiter.in_use == 0


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        PriorityLimiter(0)


def test_retry_after_is_honoured_up_to_its_maximum() -> None:
    import random

    from backchannel.backends import RetryPolicy

    policy = RetryPolicy(max_retries=3, base_delay_s=0.0, max_delay_s=1.0, max_retry_after_s=60.0)
    rng = random.Random(0)
    assert policy.delay(0, 2.5, rng) == 2.5  # jitter cap is 0: exactly what the server asked
    assert policy.delay(0, 3600.0, rng) == 60.0  # an hour is capped at max_retry_after_s


async def test_a_larger_bound_admits_waiters_and_a_smaller_one_waits_for_calls_to_finish() -> None:
    limiter = PriorityLimiter(1)
    await limiter.acquire(critical=True)
    waiters = [asyncio.create_task(limiter.acquire(critical=True)) for _ in range(3)]
    await asyncio.sleep(0)
    limiter.resize(3)
    await asyncio.sleep(0)
    assert limiter.in_use == 3 and sum(w.done() for w in waiters) == 2
    limiter.resize(1)
    limiter.release()  # 3 in use, bound 1: the slot is not handed on
    limiter.release()
    await asyncio.sleep(0)
    assert limiter.in_use == 1 and sum(w.done() for w in waiters) == 2
    limiter.release()  # at the bound again: the last waiter gets the slot
    await asyncio.wait_for(asyncio.gather(*waiters), 1)
    assert limiter.in_use == 1
