"""The dyad's typed results: what `metrics` returns and the report, `--json` and the viewer read.

Every descriptive table has rows per cell. `overall` rows average over the five levels the
study analyses (the pairing's two models, stance, style, wording), `by_pairing` rows over
stance, style and wording (the OLS models separate them), `shifts.by_cell` over none; every
other factor the run declared (e.g. `rounds`) is a key of every row. `pooled` names, per
section, the declared factors its rows span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from backchannel.analysis import CellRow, Metrics, Record

if TYPE_CHECKING:
    from backchannel.analysis import Headline


class Interval(Record):
    """A conversation-level mean with its t-based 95 % interval; `skipped` says why none."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    skipped: str | None


class Row(CellRow):
    """A per-cell row; `pairing` (the ordered `discussant vs opponent` models) where the row is
    one pairing's, absent from rows that pool the pairings."""

    omit_unset: ClassVar[bool] = True
    pairing: str | None = None


class Shift(Row):
    """Means of the aligned ratings, shifts and gaps of the analysable conversations."""

    pre_discussant: Interval
    post_discussant: Interval
    shift_discussant: Interval
    abs_shift_discussant: Interval
    pre_opponent: Interval
    post_opponent: Interval
    shift_opponent: Interval
    abs_shift_opponent: Interval
    gap_pre: Interval
    gap_post: Interval
    gap_change: Interval


class Convergence(Row):
    """Conversations whose post gap is strictly smaller than their pre gap."""

    converged: int
    n: int
    share: float | None


class Categories(Row):
    """Mean over conversations of each category's share of one role's turns."""

    ACCEPT: Interval
    REJECT: Interval
    IGNORE: Interval
    PARSE_FAILURE: Interval


class Agreement(Row):
    """How often one role's interaction state equals its rating on respondable rounds."""

    share_equal: Interval
    mean_abs_diff: Interval
    role_rounds: int


class Stability(Row):
    """(conversation, role) units whose last `window` ratings are identical."""

    stable: int
    n: int
    share: float | None
    left_out: int


R = TypeVar("R", bound=Row)


class Scoped(Record, Generic[R]):
    """Rows pooling the pairings (`overall`) and rows per pairing (`by_pairing`)."""

    overall: list[R]
    by_pairing: list[R]


class Shifts(Record):
    """Ratings, shifts and gaps overall, per pairing and per cell of every declared factor."""

    overall: list[Shift]
    by_pairing: list[Shift]
    by_cell: list[Shift]


class PerRole(Record, Generic[R]):
    discussant: Scoped[R]
    opponent: Scoped[R]


class LateStability(Record):
    window: int
    all_roles: Scoped[Stability]
    discussant: Scoped[Stability]
    opponent: Scoped[Stability]


class Welch(Record):
    """A two-sided Welch t test of mean(first) - mean(second)."""

    n_first: int
    n_second: int
    mean_first: float | None
    mean_second: float | None
    difference: float | None
    t: float | None
    df: float | None
    p: float | None
    n: int
    skipped: str | None


class Contrast(Row):
    """Manipulative minus plain conversations, per outcome."""

    shift_discussant: Welch
    abs_shift_discussant: Welch
    shift_opponent: Welch
    abs_shift_opponent: Welch
    gap_change: Welch


class Manipulation(Record):
    first: str
    second: str
    overall: list[Contrast]
    by_pairing: list[Contrast]


class Coefficient(Record):
    term: str
    estimate: float | None
    se: float | None
    z: float | None
    p: float | None


class Wald(Record):
    """A joint chi-square Wald test (HC3) that the named terms are all zero."""

    terms: list[str]
    statistic: float | None
    df: int
    p: float | None
    n: int
    skipped: str | None


class Fit(Record):
    """One HC3 OLS model; a model the data cannot support has only `skipped` and its reason."""

    formula: str
    n: int
    r_squared: float | None = None
    coefficients: list[Coefficient] | None = None
    pairing_wald: Wald | None = None
    pairing_x_style_wald: Wald | None = None
    skipped: str | None = None


class Models(Record):
    main: Fit
    interaction: Fit


class PairingComparison(CellRow):
    """A Welch test of one pairing against another, Holm-adjusted within outcome and cell."""

    first: str
    second: str
    n_first: int
    n_second: int
    mean_first: float | None
    mean_second: float | None
    difference: float | None
    t: float | None
    df: float | None
    p: float | None
    n: int
    skipped: str | None
    p_holm: float | None


class Tests(Record):
    manipulation: Manipulation
    models: dict[str, Models]
    """Per outcome; fitted on every analysable conversation with every declared factor as a
    term, so they are whole-run figures by nature."""
    pairing_comparisons: dict[str, list[PairingComparison]]


class Counts(Record):
    conversations: int
    failed_conversations: int
    finished_conversations: int
    excluded_from_shift: int
    missing_ratings: int
    failed_rating_events: int
    category_parse_failures: int
    rounds_without_state: int


class DyadMetrics(Metrics):
    """Every dyad metric and test of a run (`backchannel metrics RUN --json`)."""

    run_level: ClassVar[frozenset[str]] = frozenset(
        {"counts", "pairings", "late_stability.window", "tests.models"}
    )
    counts: Counts
    pairings: list[str]
    shifts: Shifts
    convergence: Scoped[Convergence]
    categories: PerRole[Categories]
    agreement: PerRole[Agreement]
    late_stability: LateStability
    tests: Tests

    def headline(self) -> Headline:
        """The study's shift table: each role's signed and absolute shift and the gap change,
        pooling the pairings (`pairing: all`) and per ordered pairing."""
        from backchannel.analysis import Headline, HeadlineValue

        measures = {
            "Discussant shift": "shift_discussant",
            "Opponent shift": "shift_opponent",
            "Discussant absolute shift": "abs_shift_discussant",
            "Opponent absolute shift": "abs_shift_opponent",
            "gap change": "gap_change",
        }
        rows = [(row, "all") for row in self.shifts.overall] + [
            (row, str(row.pairing)) for row in self.shifts.by_pairing
        ]
        further = [k for row, _ in rows for k in row.cell if k not in _PAIRING_LEVELS]
        extra = list(dict.fromkeys(further))
        values = []
        for row, pairing in rows:
            cell = {"pairing": pairing, **{k: row.cell.get(k) for k in extra}}
            for measure, field in measures.items():
                interval: Interval = getattr(row, field)
                values.append(HeadlineValue.of(cell, measure, interval))
        return Headline(
            title="Shifts and gap change per ordered pairing",
            rows=values,
            index=["pairing", *extra],
            columns=[],
            note="Conversation means on the aligned axis with t-based 95 % intervals; `all` "
            "pools the pairings, every row pools stance, style and wording.",
        )


_PAIRING_LEVELS = ("discussant_model", "opponent_model")
