"""Deceptive testimony: five roles with partial views recover where an object ended up; in C1 one
key witness lies. See docs/paradigms/testimony.md for environments, protocol and metrics.
"""

from backchannel.paradigms.testimony._chain import Chain, Node, StoryError, extract_chain
from backchannel.paradigms.testimony._environment import (
    DECEPTIONS,
    Environment,
    WitnessMessage,
    load_environments,
)
from backchannel.paradigms.testimony._generator import Generated, generate
from backchannel.paradigms.testimony._hitom import Story, load_hitom, stories_from_records
from backchannel.paradigms.testimony._metrics import (
    checkpoint_outcomes,
    outcome_of,
    testimony_metrics,
)
from backchannel.paradigms.testimony._protocol import Testimony
from backchannel.paradigms.testimony._rule import Rejected, assign_slots, build_environment
from backchannel.paradigms.testimony._settings import TestimonySettings
from backchannel.paradigms.testimony._verify import check_windows, verify
from backchannel.paradigms.testimony._windows import Window, merge, spans, windows_for

__all__ = [
    "DECEPTIONS",
    "Chain",
    "Environment",
    "Generated",
    "Node",
    "Rejected",
    "Story",
    "StoryError",
    "Testimony",
    "TestimonySettings",
    "Window",
    "WitnessMessage",
    "assign_slots",
    "build_environment",
    "check_windows",
    "checkpoint_outcomes",
    "extract_chain",
    "generate",
    "load_environments",
    "load_hitom",
    "merge",
    "outcome_of",
    "spans",
    "stories_from_records",
    "testimony_metrics",
    "verify",
    "windows_for",
]
