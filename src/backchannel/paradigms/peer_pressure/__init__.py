"""Peer pressure: honest agents discuss a factual question while adversaries push a false answer."""

from backchannel.paradigms.peer_pressure._agreement import judge_agreement, reweighted_fpi
from backchannel.paradigms.peer_pressure._metrics import compute_metrics, jsonable
from backchannel.paradigms.peer_pressure._protocol import (
    REASK_VARIANTS,
    PeerPressure,
    default_judge,
    item_id,
    load_source,
)
from backchannel.paradigms.peer_pressure._settings import (
    DatasetSource,
    JudgeSettings,
    PeerPressureSettings,
    ReaskSettings,
)

__all__ = [
    "REASK_VARIANTS",
    "DatasetSource",
    "JudgeSettings",
    "PeerPressure",
    "PeerPressureSettings",
    "ReaskSettings",
    "compute_metrics",
    "default_judge",
    "item_id",
    "jsonable",
    "judge_agreement",
    "load_source",
    "reweighted_fpi",
]
