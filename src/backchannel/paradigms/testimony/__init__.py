"""Deceptive testimony: five roles with partial views recover where an object ended up; in C1 one
key witness lies. See docs/paradigms/testimony.md for environments, protocol and metrics.
"""

from backchannel.paradigms.testimony._agreement import citation_agreement
from backchannel.paradigms.testimony._chain import Chain, Node, StoryError, extract_chain
from backchannel.paradigms.testimony._citations import Claim, Extraction, Invalid, parse_markup
from backchannel.paradigms.testimony._environment import (
    DECEPTIONS,
    Environment,
    WitnessMessage,
    load_environments,
)
from backchannel.paradigms.testimony._extractor import (
    LLM_JUDGE,
    CitationExtractor,
    claim_schema,
    extract_all,
    extraction_counts,
    markup_rows,
)
from backchannel.paradigms.testimony._extractor import targets as citation_targets
from backchannel.paradigms.testimony._generator import Generated, generate
from backchannel.paradigms.testimony._graph import CITATION_JUDGE, citation_table
from backchannel.paradigms.testimony._hitom import Story, load_hitom, stories_from_records
from backchannel.paradigms.testimony._lineage import lineage_metrics
from backchannel.paradigms.testimony._metrics import (
    checkpoint_outcomes,
    outcome_of,
    testimony_metrics,
)
from backchannel.paradigms.testimony._phases import label_of
from backchannel.paradigms.testimony._protocol import Testimony
from backchannel.paradigms.testimony._rule import Rejected, assign_slots, build_environment
from backchannel.paradigms.testimony._settings import TestimonySettings
from backchannel.paradigms.testimony._verify import check_windows, verify
from backchannel.paradigms.testimony._votes import vote_kind
from backchannel.paradigms.testimony._windows import Window, merge, spans, windows_for

__all__ = [
    "CITATION_JUDGE",
    "DECEPTIONS",
    "LLM_JUDGE",
    "Chain",
    "CitationExtractor",
    "Claim",
    "Environment",
    "Extraction",
    "Generated",
    "Invalid",
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
    "citation_agreement",
    "citation_table",
    "citation_targets",
    "claim_schema",
    "extract_all",
    "extract_chain",
    "extraction_counts",
    "generate",
    "label_of",
    "lineage_metrics",
    "load_environments",
    "load_hitom",
    "markup_rows",
    "merge",
    "outcome_of",
    "parse_markup",
    "spans",
    "stories_from_records",
    "testimony_metrics",
    "verify",
    "vote_kind",
    "windows_for",
]
