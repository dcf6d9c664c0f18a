"""Testimony's typed results: what `metrics` returns and the report, `--json` and the viewer read.

A row of a per-arm table has the study's arm keys (`model`: the story roles' models, joined by
`+`; `condition`; `intervention`), then the level of every other factor the run declares
(`temperature`, `key_model`, ...), then its own keys (group, checkpoint, ...): two levels of a
factor are never averaged into one number. A section whose definition contrasts factor levels
(C0 against C1, an intervention against its reference, one model against another) names them
in `pooled`, as does the extraction summary, which counts the whole run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from backchannel.analysis import CellRow, Metrics, Record
from backchannel.paradigms.testimony._cells import ARM_KEYS

if TYPE_CHECKING:
    from backchannel.analysis import Headline, HeadlineValue


class Rate(Record):
    """A share of runs with its Wilson 95 % interval; n = 0 gives no estimate, `skipped` why."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    k: int
    skipped: str | None


class PairedDifference(Record):
    """mean(first - second) over paired stories in percentage points, a bootstrap 95 %
    interval and an exact test (`test` names it); `skipped` says why a test had nothing to do."""

    estimate_pp: float | None
    low_pp: float | None
    high_pp: float | None
    n: int
    p_value: float | None
    test: str
    reason: str | None = None
    skipped: str | None


class ArmRow(CellRow):
    """A row of one arm (model, condition, intervention) and level of every other factor."""

    keys: ClassVar[tuple[str, ...]] = ARM_KEYS


class OutcomeRate(ArmRow):
    """One group at one checkpoint: the share of runs with each outcome, vote shares and the
    votes that failed or were cut off."""

    group: str
    checkpoint: str
    runs: int
    truth: Rate
    decoy: Rate
    none: Rate
    true_share: float | None
    decoy_share: float | None
    unknown_share: float | None
    other_share: float | None
    truncated_share: float | None
    failed_share: float | None
    failed_votes: int
    truncated_votes: int


class DeceptionRate(ArmRow):
    """The analysed group's truth majority at the final checkpoint, per deception type (`all`:
    every story of the arm)."""

    deception: str
    checkpoint: str
    truth: Rate


class ConditionGap(CellRow):
    """C0 - C1 per story of one model (intervention none) at one checkpoint, for one measure,
    overall or within one level of a split."""

    keys: ClassVar[tuple[str, ...]] = ("model",)
    checkpoint: str
    measure: str
    split: str
    level: str
    estimate_pp: float | None
    low_pp: float | None
    high_pp: float | None
    n: int
    p_value: float | None
    test: str
    reason: str | None = None
    skipped: str | None
    omit_unset: ClassVar[bool] = True


class GapAtT1(CellRow):
    """The share of one model's final C0 - C1 truth gap already present at T1."""

    keys: ClassVar[tuple[str, ...]] = ("model",)
    omit_unset: ClassVar[bool] = True
    final_checkpoint: str
    share: float | None
    gap_t1_pp: float | None = None
    gap_final_pp: float | None = None
    reason: str | None = None


class ModelComparison(CellRow):
    """Two models paired by story at the final checkpoint, on one measure."""

    omit_unset: ClassVar[bool] = True
    model_a: str
    model_b: str
    measure: str
    estimate_pp: float | None
    low_pp: float | None
    high_pp: float | None
    n: int
    p_value: float | None
    test: str
    reason: str | None = None
    skipped: str | None


class Contrast(CellRow):
    """An intervention arm against its reference, paired by story at the final checkpoint."""

    keys: ClassVar[tuple[str, ...]] = ("model",)
    omit_unset: ClassVar[bool] = True
    arm: str
    reference: str
    outcome: str
    estimate_pp: float | None
    low_pp: float | None
    high_pp: float | None
    n: int
    p_value: float | None
    test: str
    reason: str | None = None
    skipped: str | None


class Extraction(Record):
    """How many statements a judge's extraction has claims for, and the invalid citations."""

    statements: int
    by_status: dict[str, int]
    claims: int
    invalid_citations: dict[str, int]


class CitationRate(ArmRow):
    """One group's statements of one round, for one testimony: how they cite and adopt it."""

    group: str
    testimony: str
    phase: str
    statements: int
    not_extracted: int
    direct_rate: float | None
    carrier_rate: float | None
    citation_rate: float | None
    adoption_rate: float | None
    endpoint_support_rate: float | None
    citing: int
    adoption_given_citation: float | None
    claims_adopting: int
    claims_direct: int
    claims_carrier: int
    carrying: int
    mean_order: float | None


class RootStates(ArmRow):
    """Members of one round by the evidence roots they hold."""

    phase: str
    members: int
    none: int
    true_only: int
    false_only: int
    both: int


class Transition(ArmRow):
    """Members whose root state went from one state to another between two rounds."""

    from_phase: str
    to_phase: str
    from_state: str
    to_state: str
    count: int


class Pickup(ArmRow):
    """Single-root holders of one round that hold the other root in the next."""

    from_phase: str
    to_phase: str
    from_state: str
    holders: int
    picked_up: int
    share: float | None


class BothRootVotes(ArmRow):
    """The votes of the members of one round that hold both roots."""

    phase: str
    holders: int
    true_share: float | None
    decoy_share: float | None
    unknown_share: float | None
    other_share: float | None
    truncated_share: float | None
    failed_share: float | None


class SingleRootOrder(ArmRow):
    """The mean propagation order at which single-root holders of one round hold their root."""

    phase: str
    root: str
    holders: int
    mean_order: float | None


class JudgeLineage(Record):
    """Every lineage measure under one citation judge."""

    extraction: Extraction
    citation: list[CitationRate]
    root_states: list[RootStates]
    transitions: list[Transition]
    pickups: list[Pickup]
    both_root_votes: list[BothRootVotes]
    single_root_order: list[SingleRootOrder]


class Lineage(Record):
    """The lineage measures of every citation judge of the run."""

    judges: list[str]
    by_judge: dict[str, JudgeLineage]


# The study's measures (paradigms/testimony/study.yaml), from the paired gaps' measure names.
# Each: (the study's measure, the direction as the headline's `condition` column, the sign).
HEADLINE_GAPS = {
    "truth_majority": ("truth majority C0 - C1", "C0 - C1", 1),
    "true_vote_share": ("true-vote share C0 - C1", "C0 - C1", 1),
    "decoy_vote_share": ("decoy-vote share C1 - C0", "C1 - C0", -1),
}


class TestimonyMetrics(Metrics):
    """Every testimony metric of a run (`backchannel metrics RUN --json`)."""

    run_level: ClassVar[frozenset[str]] = frozenset(
        {"conversations", "not_done", "checkpoints", "failed_votes", "truncated_votes"}
    )
    conversations: int
    not_done: int
    analysed_group: str
    checkpoints: list[str]
    failed_votes: int
    truncated_votes: int
    outcome_rates: list[OutcomeRate]
    truth_by_deception: list[DeceptionRate]
    condition_gaps: list[ConditionGap]
    gap_at_T1: list[GapAtT1]
    between_models: list[ModelComparison]
    intervention_contrasts: list[Contrast]
    lineage: Lineage

    def headline(self) -> Headline:
        """The study's main table: the analysed group's truth majority at the final checkpoint
        in C0 and C1 and the paired gaps (truth majority and true-vote share C0 - C1, decoy-vote
        share C1 - C0), per model, every other factor's level and deception type (`all`: every
        story), with 95 % intervals and n."""
        from backchannel.analysis import Headline, HeadlineValue

        last = self.checkpoints[-1] if self.checkpoints else ""
        extra = list(
            dict.fromkeys(
                k for row in self.truth_by_deception for k in row.cell if k not in ARM_KEYS
            )
        )
        values: list[HeadlineValue] = []
        for rate in self.truth_by_deception:
            if rate.cell.get("intervention") != "none" or rate.checkpoint != last:
                continue
            cell = {
                "model": rate.cell.get("model"),
                **{k: rate.cell.get(k) for k in extra},
                "deception": rate.deception,
                "condition": rate.cell.get("condition"),
            }
            values.append(HeadlineValue.of(cell, "truth majority", rate.truth))
        for gap in self.condition_gaps:
            named = HEADLINE_GAPS.get(gap.measure)
            if named is None or gap.checkpoint != last or gap.split not in ("all", "deception"):
                continue
            measure, direction, sign = named
            cell = {
                "model": gap.cell.get("model"),
                **{k: gap.cell.get(k) for k in extra},
                "deception": gap.level,
                "condition": direction,
            }
            values.append(_from_gap(cell, measure, gap, sign))
        values.sort(key=lambda v: tuple(str(v.cell.get(k)) for k in ("model", *extra)))
        return Headline(
            title=f"Truth majority at {last} in C0 and C1, and the paired gaps",
            rows=values,
            index=["model", *extra, "deception"],
            columns=["condition"],
            note="The four story roles other than the key role, at the final checkpoint, without "
            "intervention; majority = 3 of 4. Rates with Wilson 95 % intervals (n = runs); gaps "
            "per story in shares (C0 - C1; the decoy-vote share C1 - C0) with bootstrap 95 % "
            "intervals (n = stories with both conditions).",
        )


def _from_gap(cell: dict[str, object], measure: str, gap: ConditionGap, sign: int) -> HeadlineValue:
    """A gap in shares (the metrics keep percentage points); sign -1 turns C0 - C1 into
    C1 - C0, its interval with it."""
    from backchannel.analysis import HeadlineValue

    def share(value: float | None) -> float | None:
        return None if value is None else sign * value / 100

    low, high = share(gap.low_pp), share(gap.high_pp)
    if sign < 0:
        low, high = high, low
    return HeadlineValue(
        cell=cell,
        measure=measure,
        estimate=share(gap.estimate_pp),
        low=low,
        high=high,
        n=gap.n,
        skipped=gap.reason or (None if gap.estimate_pp is not None else gap.skipped),
    )
