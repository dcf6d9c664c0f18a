"""The council's typed results: what `metrics` returns and the report and `--json` read.

A group row is one scenario, Delphi variant, state (A, B or C) and level of every other factor
the run declares (the `pool` level of its conversations, B for state C); a test row compares
states within one scenario, Delphi variant and level of every factor but `pool`, whose levels
it compares (`pooled` says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import Field

from backchannel.analysis import CellRow, IntervalRecord, Metrics, Record

if TYPE_CHECKING:
    from backchannel.analysis import Headline, HeadlineValue


Interval = IntervalRecord
"""A bootstrap interval (the shared typed form)."""


class BordaTotal(Record):
    """One option's Borda points summed over a group's tallies, and their mean per tally."""

    total: float
    mean: float
    n: int


class Tension(Record):
    """Evaluator pairs on tension pairs per class, and the credible share of measurable ones."""

    counts: dict[str, int]
    credible_tension_rate: float | None
    by_pair: dict[str, dict[str, int]]


class Revisions(Record):
    """What one Delphi round changed (variants other than `none`)."""

    vote_changes_total: int
    vote_changes_mean: float | None
    ranking_changes_total: int
    revised_total: int
    invalid_revisions: int
    fcc_revised: Interval


class Group(CellRow):
    """The measures of one group of deliberations; parts a group lacks (no tension pair, no
    verification score, no Delphi round) are absent."""

    keys: ClassVar[tuple[str, ...]] = ("scenario", "delphi")
    omit_unset: ClassVar[bool] = True
    state: str
    deliberations: int
    borda_totals: dict[str, BordaTotal]
    fcc: Interval
    margin: Interval
    entropy_bits: Interval
    winner_distribution: dict[str, int]
    invalid_rankings: int
    failed_scores: int
    tension: Tension | None = None
    voice_authenticity_rate: float | None = None
    consistency_per_value: dict[str, float] | None = None
    revisions: Revisions | None = None


class Comparison(CellRow):
    """One pre-registered one-sided comparison of two states."""

    keys: ClassVar[tuple[str, ...]] = ("scenario", "delphi")
    measure: str
    comparison: str
    primary: bool
    test: str
    alternative: str
    method: str | None
    statistic: float | None
    p_value: float | None
    p_adjusted: float | None
    n: int


class MannWhitney(Comparison):
    """A vs B: independent deliberations."""

    test: Literal["mann_whitney_u"]
    n_first: int
    n_second: int
    rank_biserial: Interval
    skipped: str | None


class Wilcoxon(Comparison):
    """B vs C: the same deliberations, tallied twice."""

    test: Literal["wilcoxon_signed_rank"]
    pairs: int
    zeros: int
    rank_biserial: Interval
    skipped: str | None


class Profiling(Record):
    """State-B deliberations that ran profiling, and those one model won every value of."""

    profiled: int
    collapsed: int


class CouncilMetrics(Metrics):
    """Every council metric of a run (`backchannel metrics RUN --json`)."""

    run_level: ClassVar[frozenset[str]] = frozenset({"threshold", "conversations", "profiling"})
    threshold: float | None
    """The faithfulness threshold of every cell; null when the run varies it as a factor (each
    row then uses its own level)."""
    conversations: dict[str, int]
    profiling: Profiling
    groups: list[Group]
    tests: list[Annotated[MannWhitney | Wilcoxon, Field(discriminator="test")]]

    def headline(self) -> Headline:
        """The study's results table: FCC, Borda margin and effective perspectives with their
        intervals, voice authenticity and credible tension rates, per scenario (and cell) with
        the states A, B and C across."""
        from backchannel.analysis import Headline, HeadlineValue

        further = [k for g in self.groups for k in g.cell if k not in ("scenario", "pool")]
        keys = ["scenario", *dict.fromkeys(further)]
        values = []
        for g in self.groups:
            # The pool the state was measured in stays in the cell (not in the layout), so a
            # value links to its own deliberations.
            cell = {
                **{k: g.cell.get(k) for k in keys},
                "state": g.state,
                "pool": g.cell.get("pool"),
            }
            values += [
                HeadlineValue.of(cell, "FCC", g.fcc),
                HeadlineValue.of(cell, "Borda margin", g.margin),
                HeadlineValue.of(cell, "effective perspectives (bits)", g.entropy_bits),
                _rate(cell, "voice authenticity rate", g.voice_authenticity_rate, g),
                _rate(
                    cell,
                    "credible tension rate",
                    g.tension.credible_tension_rate if g.tension else None,
                    g,
                ),
            ]
        return Headline(
            title="Concentration, margin and credibility per scenario and state",
            rows=values,
            index=keys,
            columns=["state"],
            note="Means over deliberations with 95 % bootstrap intervals; the two rates pool "
            "the group's evaluators (tension pairs), n counts deliberations. C re-tallies B.",
        )


def _rate(cell: dict[str, object], measure: str, rate: float | None, g: Group) -> HeadlineValue:
    from backchannel.analysis import HeadlineValue

    reason = None if rate is not None else "nothing to measure in this group"
    return HeadlineValue(
        cell=cell, measure=measure, estimate=rate, n=g.deliberations, skipped=reason
    )
