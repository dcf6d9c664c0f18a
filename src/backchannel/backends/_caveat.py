"""What a reader must know about a run's models before reading its numbers."""

from __future__ import annotations

from collections.abc import Iterable

from backchannel.backends._local import SMALL_MODEL_WARNING
from backchannel.backends._population import is_simulated

TOO_SMALL = frozenset({"local/smollm2"})
"""Models known to be far too small for findings."""


def model_caveat(models: Iterable[str]) -> str | None:
    """One paragraph naming the simulated and too-small models of a run, or None if it used
    neither."""
    used = sorted({m for m in models if isinstance(m, str) and m})
    simulated = [m for m in used if is_simulated(m)]
    small = [m for m in used if m in TOO_SMALL]
    parts = []
    if simulated:
        parts.append(
            "Simulated run: answers came from scripted or simulated models "
            f"({', '.join(simulated)}), not from language models. The numbers check the "
            "pipeline (sim/population plants known parameters); they are not findings."
        )
    if small:
        parts.append(SMALL_MODEL_WARNING)
    if not parts:
        return None
    return " ".join(parts) + f" Models used: {', '.join(used)}."
