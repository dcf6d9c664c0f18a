"""The adaptive (AIMD) in-flight bound: growth per window while latency holds, one halving per
window of overload, always within its limits. Worked out by hand for latencies of 1.0 s."""

from __future__ import annotations

import pytest

from backchannel.backends._adaptive import AdaptiveLimiter


def test_grows_by_one_per_window_of_good_calls_up_to_the_maximum() -> None:
    limiter = AdaptiveLimiter(2, 4)
    # Window = the bound: 2 good calls -> 3, 3 more -> 4, then it stays at the maximum.
    for expected in (2, 2, 3, 3, 3):
        assert limiter.limit == expected
        limiter.record_success(1.0)
    assert limiter.limit == 4
    for _ in range(10):
        limiter.record_success(1.0)
    assert limiter.limit == 4 and limiter.increases == 2


def test_slow_answers_hold_the_bound() -> None:
    limiter = AdaptiveLimiter(2, 8, tolerance=2.0)
    limiter.record_success(1.0)
    for _ in range(20):
        limiter.record_success(2.5)  # more than twice the fastest: queueing, no growth
    assert limiter.limit == 2
    limiter.record_success(2.0)  # within the tolerance: counts (window 2: one more needed)
    assert limiter.limit == 2
    limiter.record_success(1.5)
    assert limiter.limit == 3


def test_overload_halves_once_per_window_never_below_the_minimum() -> None:
    limiter = AdaptiveLimiter(3, 64)
    limiter.resize(32)
    for _ in range(10):  # one burst of 429s: one halving
        limiter.record_overload()
    assert limiter.limit == 16 and limiter.decreases == 1
    for _ in range(7):
        limiter.record_success(1.0)  # 9 + 7 = 16 finished calls since the halving
    limiter.record_overload()
    assert limiter.limit == 8
    for _ in range(8):
        limiter.record_overload()  # the first 8 fall in the window after the halving
    limiter.record_overload()
    assert limiter.limit == 4
    for _ in range(4):
        limiter.record_other()
    limiter.record_overload()
    assert limiter.limit == 3 and limiter.decreases == 4


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="min_in_flight <= max_in_flight"):
        AdaptiveLimiter(5, 4)
    with pytest.raises(ValueError, match="tolerance"):
        AdaptiveLimiter(1, 4, tolerance=0.5)
