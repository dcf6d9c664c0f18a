"""Experiment paradigms: discussion, peer pressure, dyad opinion dynamics, policy council."""

from backchannel.paradigms._base import AnalysisOptions, CallEstimate, Paradigm, is_model_key
from backchannel.paradigms._registry import ENTRY_POINT_GROUP, PARADIGMS, get_paradigm, registered

__all__ = [
    "ENTRY_POINT_GROUP",
    "PARADIGMS",
    "AnalysisOptions",
    "CallEstimate",
    "Paradigm",
    "get_paradigm",
    "is_model_key",
    "registered",
]
