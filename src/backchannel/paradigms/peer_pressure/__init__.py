"""Peer pressure: honest agents discuss a factual question while adversaries push a false answer."""

from backchannel.paradigms.peer_pressure._agreement import judge_agreement, reweighted_fpi
from backchannel.paradigms.peer_pressure._metrics import compute_metrics
from backchannel.paradigms.peer_pressure._protocol import (
    REASK_VARIANTS,
    PeerPressure,
    default_judge,
    item_id,
)
from backchannel.paradigms.peer_pressure._settings import (
    JudgeSettings,
    PeerPressureSettings,
    ReaskSettings,
)

__all__ = [
    "REASK_VARIANTS",
    "JudgeSettings",
    "PeerPressure",
    "PeerPressureSettings",
    "ReaskSettings",
    "compute_metrics",
    "default_judge",
    "item_id",
    "judge_agreement",
    "reweighted_fpi",
]
