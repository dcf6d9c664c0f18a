"""Per-row reference versions of peer pressure's vectorised steps, for the tests to compare."""

from __future__ import annotations

from typing import Any

import numpy as np

from backchannel.paradigms.peer_pressure._order import _POSITIONS


def speaker_lists(heard: np.ndarray, bounds: np.ndarray, skip: np.ndarray) -> list[Any]:
    """Per probe the names of `heard[bounds[i]:bounds[i + 1]]`, None where skipped or empty."""
    flat: list[Any] = _POSITIONS[heard].tolist()
    edges = np.asarray(bounds).tolist()
    return [
        None if s or a == b else flat[a:b]
        for s, a, b in zip(np.asarray(skip).tolist(), edges[:-1], edges[1:], strict=True)
    ]
