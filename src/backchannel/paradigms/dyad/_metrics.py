"""The dyad's `metrics` result: typed results (`DyadMetrics`) built from a run's tidy tables."""

from __future__ import annotations

from typing import Any

from backchannel.analysis import RunTables, jsonable
from backchannel.paradigms.dyad._cells import Cells
from backchannel.paradigms.dyad._extract import DyadFrames, extract
from backchannel.paradigms.dyad._inference import inference
from backchannel.paradigms.dyad._results import DyadMetrics
from backchannel.paradigms.dyad._scale import ROLES
from backchannel.paradigms.dyad._summary import (
    agreement_summary,
    category_rates,
    convergence_summary,
    late_stability_summary,
    shift_summary,
)

STABILITY_WINDOW = 3


def pooled_sections(cells: Cells) -> dict[str, list[str]]:
    """Section path -> the declared factors its rows span: `overall` rows the five analysis
    levels, `by_pairing` rows (and a contrast of manipulative with plain within a pairing)
    stance, style and wording, the comparisons of pairings all five."""
    scoped = [
        "shifts",
        "convergence",
        *(f"{section}.{role}" for section in ("categories", "agreement") for role in ROLES),
        *(f"late_stability.{who}" for who in ("all_roles", *ROLES)),
        "tests.manipulation",
    ]
    found: dict[str, list[str]] = {}
    for section in scoped:
        found[f"{section}.overall"] = cells.pooled("overall")
        found[f"{section}.by_pairing"] = cells.pooled("by_pairing")
    found["tests.pairing_comparisons"] = cells.pooled("overall")
    return {path: factors for path, factors in found.items() if factors}


def metrics_from_frames(frames: DyadFrames, window: int = STABILITY_WINDOW) -> DyadMetrics:
    """Every dyad metric and test from already extracted frames."""
    figures: dict[str, Any] = {
        "counts": dict(frames.counts),
        "pairings": sorted(str(p) for p in frames.outcomes["pairing"].unique()),
        "shifts": shift_summary(frames),
        "convergence": convergence_summary(frames),
        "categories": category_rates(frames),
        "agreement": agreement_summary(frames),
        "late_stability": late_stability_summary(frames, window),
        "tests": inference(frames.analysable, cells=frames.cells),
        "pooled": pooled_sections(frames.cells),
    }
    return DyadMetrics.build(jsonable(figures), frames.cells.design)


def dyad_metrics(tables: RunTables, window: int = STABILITY_WINDOW) -> DyadMetrics:
    """Every dyad metric and test of a run (`backchannel metrics RUN --json`)."""
    return metrics_from_frames(extract(tables), window)
