"""The policy-council paradigm: advocates debate, evaluators rank, a verifier checks."""

from backchannel.paradigms.council._stats import TestResult, bonferroni, mann_whitney, wilcoxon
from backchannel.paradigms.council._tension import (
    DEFAULT_THRESHOLD,
    PairVerdict,
    TensionClass,
    class_counts,
    classify,
    credible_tension_rate,
    tension_verdicts,
    voice_authenticity_rate,
)
from backchannel.paradigms.council._values import (
    TENSION_PAIRS,
    VALUE_DEFINITIONS,
    TensionPair,
    tension_partner,
)
from backchannel.paradigms.council._voting import (
    Ballot,
    Tally,
    borda,
    first_choice_concentration,
    first_choice_entropy,
    first_choice_shares,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "TENSION_PAIRS",
    "VALUE_DEFINITIONS",
    "Ballot",
    "PairVerdict",
    "Tally",
    "TensionClass",
    "TensionPair",
    "TestResult",
    "bonferroni",
    "borda",
    "class_counts",
    "classify",
    "credible_tension_rate",
    "first_choice_concentration",
    "first_choice_entropy",
    "first_choice_shares",
    "mann_whitney",
    "tension_partner",
    "tension_verdicts",
    "voice_authenticity_rate",
    "wilcoxon",
]
