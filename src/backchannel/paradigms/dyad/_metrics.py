"""The dyad's `metrics` result: one JSON-able dictionary built from a run's tidy tables."""

from __future__ import annotations

from typing import Any

from backchannel.analysis import RunTables
from backchannel.paradigms.dyad._extract import DyadFrames, extract
from backchannel.paradigms.dyad._inference import inference
from backchannel.paradigms.dyad._summary import (
    agreement_summary,
    category_rates,
    convergence_summary,
    late_stability_summary,
    shift_summary,
)

STABILITY_WINDOW = 3


def metrics_from_frames(frames: DyadFrames, window: int = STABILITY_WINDOW) -> dict[str, Any]:
    """Every dyad metric and test from already extracted frames."""
    return {
        "counts": dict(frames.counts),
        "pairings": sorted(str(p) for p in frames.outcomes["pairing"].unique()),
        "shifts": shift_summary(frames),
        "convergence": convergence_summary(frames),
        "categories": category_rates(frames),
        "agreement": agreement_summary(frames),
        "late_stability": late_stability_summary(frames, window),
        "tests": inference(frames.analysable),
    }


def dyad_metrics(tables: RunTables, window: int = STABILITY_WINDOW) -> dict[str, Any]:
    """Every dyad metric and test of a run (`backchannel metrics RUN --json`)."""
    return metrics_from_frames(extract(tables), window)
