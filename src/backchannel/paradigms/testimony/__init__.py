"""Deceptive testimony: five roles with partial views recover where an object ended up; in C1 one
key witness lies. See docs/paradigms/testimony.md for environments, protocol and metrics.
"""

from backchannel.paradigms.testimony._agreement import citation_agreement
from backchannel.paradigms.testimony._chain import (
    AddedMove,
    Chain,
    Node,
    StoryError,
    add_move,
    extract_chain,
    objects,
)
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
from backchannel.paradigms.testimony._results import TestimonyMetrics
from backchannel.paradigms.testimony._rule import (
    Assignment,
    Rejected,
    assign_slots,
    assign_windows,
    build_environment,
)
from backchannel.paradigms.testimony._settings import TestimonySettings
from backchannel.paradigms.testimony._verify import check_windows, verify
from backchannel.paradigms.testimony._votes import vote_kind
from backchannel.paradigms.testimony._walks import (
    Fragment,
    Move,
    Walk,
    accounts_of,
    endpoints,
    walks,
)
from backchannel.paradigms.testimony._windows import Window, merge, spans, windows_for

__all__ = [
    "CITATION_JUDGE",
    "DECEPTIONS",
    "LLM_JUDGE",
    "AddedMove",
    "Assignment",
    "Chain",
    "CitationExtractor",
    "Claim",
    "Environment",
    "Extraction",
    "Fragment",
    "Generated",
    "Invalid",
    "Move",
    "Node",
    "Rejected",
    "Story",
    "StoryError",
    "Testimony",
    "TestimonyMetrics",
    "TestimonySettings",
    "Walk",
    "Window",
    "WitnessMessage",
    "accounts_of",
    "add_move",
    "assign_slots",
    "assign_windows",
    "build_environment",
    "check_windows",
    "checkpoint_outcomes",
    "citation_agreement",
    "citation_table",
    "citation_targets",
    "claim_schema",
    "endpoints",
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
    "objects",
    "outcome_of",
    "parse_markup",
    "spans",
    "stories_from_records",
    "testimony_metrics",
    "verify",
    "vote_kind",
    "walks",
    "windows_for",
]
