"""What a reader must know about a run's models before reading its numbers (plain strings: read
by `status` without loading any model client)."""

from __future__ import annotations

from collections.abc import Iterable

SMALL_MODEL_WARNING = (
    "local/smollm2 is SmolLM2-135M-Instruct, a plumbing default that shows the pipeline works; "
    "it is far too small for findings. Point the experiment at a real model for research."
)
TOO_SMALL = frozenset({"local/smollm2"})
"""Models known to be far too small for findings."""


def is_simulated(model: str) -> bool:
    """Whether a model string names a simulated backend (`sim`, `sim#x`, `sim/<name>`)."""
    return model == "sim" or model.startswith(("sim#", "sim/"))


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
