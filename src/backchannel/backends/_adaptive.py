"""An in-flight bound that adapts to the server (AIMD): one more slot per window of calls whose
latency holds, half the slots on a rate limit or a timeout, always within configured limits.

"Latency holds" means a call took at most `tolerance` times the fastest call seen: a server
that queues answers slower, so the bound stops growing where queueing starts (with `tolerance`
2 that is about twice the server's parallel slots, which keeps it busy without flooding it).
After a halving, further overload signals are ignored until as many calls as the new bound
have finished, so one burst of 429s halves the bound once, not once per failed call.
"""

from __future__ import annotations

from backchannel.backends._limit import PriorityLimiter


class AdaptiveLimiter(PriorityLimiter):
    """A priority limiter whose bound moves between `minimum` and `maximum` (AIMD)."""

    def __init__(self, minimum: int, maximum: int, *, tolerance: float = 2.0) -> None:
        if minimum < 1 or maximum < minimum:
            raise ValueError("adaptive in-flight limits need 1 <= min_in_flight <= max_in_flight")
        if tolerance < 1.0:
            raise ValueError("the latency tolerance must be at least 1")
        super().__init__(minimum)
        self.minimum = minimum
        self.maximum = maximum
        self.tolerance = tolerance
        self.fastest_s: float | None = None
        self.increases = 0
        self.decreases = 0
        self._good = 0
        self._since_decrease: int | None = None

    def record_success(self, latency_s: float) -> None:
        """A call was answered after `latency_s`: grow by one after a window of good calls."""
        self._finished()
        if self.fastest_s is None or latency_s < self.fastest_s:
            self.fastest_s = latency_s
        if latency_s > self.tolerance * self.fastest_s:
            self._good = 0
            return
        self._good += 1
        if self._good >= self.limit and self.limit < self.maximum:
            self._good = 0
            self.increases += 1
            self.resize(self.limit + 1)

    def record_overload(self) -> None:
        """A call was rate limited or timed out: halve the bound, once per window."""
        if self._since_decrease is not None and self._since_decrease < self.limit:
            self._finished()
            return
        self._good = 0
        self._since_decrease = 0
        new = max(self.minimum, self.limit // 2)
        if new < self.limit:
            self.decreases += 1
            self.resize(new)

    def record_other(self) -> None:
        """A call failed for another reason (a server error): no change of the bound."""
        self._finished()

    def _finished(self) -> None:
        if self._since_decrease is not None:
            self._since_decrease += 1
