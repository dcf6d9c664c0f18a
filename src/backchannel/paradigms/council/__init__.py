"""The policy-council paradigm: advocates debate, evaluators rank, a verifier checks."""

from backchannel.paradigms.council._metrics import (
    HYPOTHESES,
    Hypothesis,
    council_metrics,
    deliberation_table,
    pair_table,
    score_table,
)
from backchannel.paradigms.council._protocol import Council
from backchannel.paradigms.council._scenarios import Option, Scenario, load_scenario
from backchannel.paradigms.council._settings import CouncilSettings, ValueSpec
from backchannel.paradigms.council._stats import (
    ComparisonResult,
    bonferroni,
    mann_whitney,
    wilcoxon,
)
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
    "HYPOTHESES",
    "TENSION_PAIRS",
    "VALUE_DEFINITIONS",
    "Ballot",
    "ComparisonResult",
    "Council",
    "CouncilSettings",
    "Hypothesis",
    "Option",
    "PairVerdict",
    "Scenario",
    "Tally",
    "TensionClass",
    "TensionPair",
    "ValueSpec",
    "bonferroni",
    "borda",
    "class_counts",
    "classify",
    "council_metrics",
    "credible_tension_rate",
    "deliberation_table",
    "first_choice_concentration",
    "first_choice_entropy",
    "first_choice_shares",
    "load_scenario",
    "mann_whitney",
    "pair_table",
    "score_table",
    "tension_partner",
    "tension_verdicts",
    "voice_authenticity_rate",
    "wilcoxon",
]
