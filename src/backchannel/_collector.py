"""The cyclic garbage collector paused over a block of analysis.

A large run's analysis holds millions of long-lived Python objects (decoded metas, records,
lists of options) and makes few reference cycles; each full collection pass walks all of them
again, a few seconds of a 100,000-conversation `metrics` (bench/RESULTS.md, section k). Reference
counting still frees everything that is not in a cycle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, and back to the state it was found in after
    (so blocks nest)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
