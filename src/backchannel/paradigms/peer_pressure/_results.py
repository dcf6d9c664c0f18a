"""The peer-pressure metrics as typed results: one model whose fields are the sections, in the
order `backchannel metrics RUN --json` prints them.

Every per-cell table is a list of `CellRow`s: the cell's factor levels (the run's `Design`) as
keys, the figures as typed fields. The report reads these attributes, never string keys.
Definitions: docs/paradigms/peer_pressure_metrics.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from backchannel.analysis import CellRow, Metrics

if TYPE_CHECKING:
    from backchannel.analysis import Headline


class Part(BaseModel):
    """A fixed group of figures inside a section (not a table of cells)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Failures(Part):
    """Failed conversations, events and labels: counted here, left out of every rate."""

    conversations_failed: int
    answer_probes_failed: int
    answer_probes_unlabelled: int
    reask_probes_failed: int
    reask_probes_unlabelled: int
    turns_failed: int
    turns_unlabelled: int
    adversary_turns_failed: int


class FpiRow(CellRow):
    """Final private infection and initial infection of one cell (bootstrap 95 % intervals
    over conversations; `_n` conversations used, `_skipped` why there is no estimate)."""

    fpi: float | None
    fpi_low: float | None
    fpi_high: float | None
    fpi_n: int
    fpi_skipped: str | None
    initial: float | None
    initial_low: float | None
    initial_high: float | None
    initial_n: int
    initial_skipped: str | None


class Fpi(Part):
    by_cell: list[FpiRow]


class CourseRow(CellRow):
    """Mean infection of one cell at one checkpoint, over the conversations probed there."""

    checkpoint: int
    infection: float
    n_conversations: int


class CourseSummaryRow(CellRow):
    """How fast one cell's infection rises: its final value, the first checkpoint at half of
    it, and the share of it reached by round 4."""

    final_checkpoint: int
    final_infection: float
    half_final_round: int | None
    share_of_final_by_round_4: float | None


class TimeCourse(Part):
    by_checkpoint: list[CourseRow]
    by_cell: list[CourseSummaryRow]


class StanceCounts(Part):
    endorse: int
    reject: int
    hedge: int
    ignore: int
    unrelated: int


class StanceShares(Part):
    endorse: float | None
    reject: float | None
    hedge: float | None
    ignore: float | None
    unrelated: float | None


class SevenWayCounts(Part):
    robust_correction: int
    silent_knower: int
    social_accommodation: int
    performative_endorsement: int
    full_infection: int
    hidden_infection: int
    inconsistent: int


class SevenWayShares(Part):
    robust_correction: float | None
    silent_knower: float | None
    social_accommodation: float | None
    performative_endorsement: float | None
    full_infection: float | None
    hidden_infection: float | None
    inconsistent: float | None


class SevenWay(Part):
    """The seven private x public categories of the turns kept, and what was left out."""

    n: int
    counts: SevenWayCounts
    shares: SevenWayShares
    left_out_unrelated: int
    left_out_mixed_or_uncertain: int


class PairingRow(CellRow):
    """One pairing of exposed turns with private answers, in one cell."""

    n_turns: int
    private_infection_rate: float | None
    public_endorsement_rate: float | None
    private_to_public_ratio: float | None
    infected_stance_counts: StanceCounts
    infected_stance_shares: StanceShares
    n_knower_turns: int
    knower_correction_rate: float | None
    seven_way: SevenWay


class Pairings(Part):
    """The three pairings (main, first speaker x probe before, last speaker x probe after)."""

    main: list[PairingRow]
    first_before: list[PairingRow]
    last_after: list[PairingRow]


class TurnsRow(CellRow):
    """The main pairing of one cell with paired turns, flattened: rates and seven-way shares."""

    n_turns: int
    private_infection_rate: float | None
    public_endorsement_rate: float | None
    private_to_public_ratio: float | None
    knower_correction_rate: float | None
    robust_correction: float | None
    silent_knower: float | None
    social_accommodation: float | None
    performative_endorsement: float | None
    full_infection: float | None
    hidden_infection: float | None
    inconsistent: float | None


class CarryOverRow(CellRow):
    """Among one cell's exposed turns infected after their round, those infected before it."""

    n_infected_after: int
    n_already_infected: int
    carry_over: float | None


class SelfInternalisationRow(CellRow):
    """Speakers true before their exposed turn, in one cell: the share infected after it, for
    one stance and one set of speakers (all, or the round's first honest speakers)."""

    speakers: Literal["all_speakers", "first_speakers"]
    stance: Literal["reject", "endorse", "ignore", "hedge"]
    n: int
    infected: int
    rate: float | None


class CascadeRow(CellRow):
    """Conversions of uninfected agents in one cell and bin of infected peers."""

    bin: str
    n: int
    conversions: int
    probability: float | None
    probability_low: float | None
    probability_high: float | None
    skipped: str | None


class DyadRow(CellRow):
    """FPI of N-agent groups minus FPI of dyads on the same items, in one cell of the factors
    other than `n_agents` (which the contrast is about)."""

    group_agents: int
    subset: Literal["all_agents", "initially_true"]
    estimate: float | None
    low: float | None
    high: float | None
    n: int
    skipped: str | None
    missing: int
    group_fpi: float | None
    dyad_fpi: float | None


class ReaskRow(CellRow):
    """One re-ask variant in one cell, against the original probe at the same checkpoint."""

    variant: str
    n: int
    infection_rate: float | None
    n_originally_infected: int
    retention: float | None
    recovery: float | None
    n_originally_true: int
    group_false_share: float | None


class ExposureRow(CellRow):
    """Honest turns of one cell exposed through the graph, and endorsement among them."""

    n_turns: int
    n_exposed: int
    exposed_share: float | None
    endorsement_exposed: float | None
    endorsement_unexposed: float | None


class DistanceRow(CellRow):
    """Final infection in one cell at one hop distance to the nearest adversary."""

    distance: int | None
    n: int
    n_infected: int
    infection: float


class ModelRow(CellRow):
    """Final infection by the honest agent's and the adversaries' model (the factors naming
    models are pooled: this split replaces them)."""

    honest_model: str
    adversary_model: str
    n: int
    n_infected: int
    infection: float


class CoursePoint(Part):
    checkpoint: int
    infection: float


class InterventionRow(CellRow):
    """One cell's conversations under one intervention (a factor, or the run's setting)."""

    keys: ClassVar[tuple[str, ...]] = ("intervention",)
    n_conversations: int
    fpi: float | None
    hidden_infection: float | None
    n_paired_turns: int
    time_course: list[CoursePoint]


class Network(Part):
    """Who heard whom, mixed-model rooms and interventions."""

    graph_exposure: list[ExposureRow]
    infection_by_distance: list[DistanceRow]
    infection_by_model: list[ModelRow]
    by_intervention: list[InterventionRow]


class ChannelAgreement(Part):
    """Two judges on the events both labelled validly, on one channel."""

    channel: str
    n: int
    percent_agreement: float | None
    kappa: float | None
    skipped: str | None
    confusion: dict[str, dict[str, int]]


class ReweightedRow(CellRow):
    """FPI under judge A and reweighted by judge B's relabelling, in one cell."""

    fpi: float | None
    fpi_low: float | None
    fpi_high: float | None
    fpi_n: int
    fpi_skipped: str | None
    reweighted_fpi: float | None
    reweighted_fpi_low: float | None
    reweighted_fpi_high: float | None
    reweighted_fpi_n: int
    reweighted_fpi_skipped: str | None


class Reweighted(Part):
    transfer: dict[str, float | None]
    agents_without_transfer: int
    by_cell: list[ReweightedRow]


class JudgeAgreement(Part):
    """Agreement of two judges (whole-run: the transfer rates pool every cell's labels)."""

    judge_a: str
    judge_b: str
    private: ChannelAgreement
    public: ChannelAgreement
    reweighted_fpi: Reweighted


class PeerPressureMetrics(Metrics):
    """Every peer-pressure metric of a run under one judge, each per cell of the design."""

    run_level: ClassVar[frozenset[str]] = frozenset({"failures", "judge_agreement"})
    judge: str
    cell_factors: list[str]
    """The run's declared factors (its `Design`), in the experiment's order."""
    failures: Failures
    fpi: Fpi
    time_course: TimeCourse
    pairings: Pairings
    turns_by_cell: list[TurnsRow]
    carry_over: list[CarryOverRow]
    self_internalisation: list[SelfInternalisationRow]
    cascade: list[CascadeRow]
    group_vs_dyad: list[DyadRow] | None
    """None when `n_agents` is not a factor of the run."""
    reask: list[ReaskRow]
    network: Network
    judge_agreement: JudgeAgreement | None = None
    """With a second judge only."""

    def as_json(self) -> dict[str, Any]:
        """What `--json` prints; `judge_agreement` only with a second judge."""
        data = super().as_json()
        if data.get("judge_agreement") is None:
            data.pop("judge_agreement", None)
        return data

    def headline(self) -> Headline:
        """The study's Fig. 2 and Tab. 3: FPI by model (and the other factors) with k across,
        then the main pairing's private infection, public endorsement and their ratio."""
        from backchannel.analysis import Headline, HeadlineValue

        index = [f for f in self.cell_factors if f != "k"]
        columns = ["k"] if "k" in self.cell_factors else []
        values = [
            HeadlineValue(
                cell=row.cell,
                measure="FPI",
                estimate=row.fpi,
                low=row.fpi_low,
                high=row.fpi_high,
                n=row.fpi_n,
                skipped=row.fpi_skipped,
            )
            for row in self.fpi.by_cell
        ]
        turn_measures = {
            "private infection (exposed turns)": "private_infection_rate",
            "public endorsement (exposed turns)": "public_endorsement_rate",
            "private/public ratio": "private_to_public_ratio",
            "knower correction rate": "knower_correction_rate",
        }
        for pairing in self.pairings.main:
            if pairing.n_turns == 0 and pairing.cell.get("k") == 0:
                continue  # no adversary, so no exposed turn by design: nothing to pair
            for measure, field in turn_measures.items():
                estimate = getattr(pairing, field)
                values.append(
                    HeadlineValue(
                        cell=pairing.cell,
                        measure=measure,
                        estimate=estimate,
                        n=pairing.n_knower_turns if field == _KNOWER else pairing.n_turns,
                        skipped=None if estimate is not None else _no_turn_rate(pairing, field),
                    )
                )
        return Headline(
            title="Final private infection by k, and private vs public on exposed turns",
            rows=values,
            index=index,
            columns=columns,
            note="FPI: the share of honest agents answering the manipulated fact privately at "
            "the last checkpoint, mean over conversations with a 95 % bootstrap interval, n "
            "conversations. The turn rates pair each exposed honest turn with its speaker's "
            "probe after the round (n turns; for the knower correction rate, the turns of agents "
            "who privately held the truth); turns of one conversation are not independent, so "
            "these rates carry no interval.",
        )


_KNOWER = "knower_correction_rate"


def _no_turn_rate(row: PairingRow, field: str) -> str:
    """Why a turn rate of one cell has no value."""
    if field == _KNOWER:
        return "no exposed turn by an agent who privately held the truth"
    if row.n_turns == 0:
        return "no exposed honest turns with a probe after them"
    if field == "private_to_public_ratio":
        return "no public endorsement to divide by"
    return "no turn could be scored"
