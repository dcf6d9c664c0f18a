"""Dyad opinion dynamics: two models debate a contested statement; ratings and interaction states.

See docs/paradigms/dyad.md for the protocol, the interaction-state rule and every metric.
"""

from backchannel.paradigms.dyad._extract import DyadFrames, extract, pairing_of
from backchannel.paradigms.dyad._inference import (
    manipulation_contrasts,
    ols_models,
    pairing_comparisons,
    welch,
)
from backchannel.paradigms.dyad._metrics import dyad_metrics, metrics_from_frames
from backchannel.paradigms.dyad._protocol import Dyad
from backchannel.paradigms.dyad._results import DyadMetrics
from backchannel.paradigms.dyad._scale import (
    Category,
    StatePath,
    Wording,
    align,
    interaction_states,
    step,
)
from backchannel.paradigms.dyad._settings import DyadSettings, Topic

__all__ = [
    "Category",
    "Dyad",
    "DyadFrames",
    "DyadMetrics",
    "DyadSettings",
    "StatePath",
    "Topic",
    "Wording",
    "align",
    "dyad_metrics",
    "extract",
    "interaction_states",
    "manipulation_contrasts",
    "metrics_from_frames",
    "ols_models",
    "pairing_comparisons",
    "pairing_of",
    "step",
    "welch",
]
