"""The headline a paradigm's results lead with, in its study's layout, and the study's own
published values beside it.

A `Headline` is tidy (one value per row: its cell keys, the measure, estimate, interval, n) plus
a layout: which keys label the rows and which spread across columns, as in the study's main
table. A `Study` is the published values shipped in the paradigm's folder (`study.yaml`), each
with the cell it belongs to and the study's model; `compare_study` puts each beside the run's
estimates of the same measure and cell and says whether it lies inside the run's interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    import pandas as pd

STUDY_FILE = "study.yaml"


class Estimate(Protocol):
    """Any result with an estimate, its 95 % interval, n and why it is missing (a paradigm's
    bootstrap interval, Wilson rate, ...)."""

    @property
    def estimate(self) -> float | None: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...
    @property
    def n(self) -> int: ...
    @property
    def skipped(self) -> str | None: ...


class HeadlineValue(BaseModel):
    """One estimate of the headline: the keys of its cell, the measure, its interval and n."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cell: dict[str, Any]
    measure: str
    estimate: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    skipped: str | None = None

    @classmethod
    def of(cls, cell: Mapping[str, Any], measure: str, result: Estimate) -> HeadlineValue:
        """The value of `measure` in `cell` from a result carrying its own interval and n."""
        return cls(
            cell=dict(cell),
            measure=measure,
            estimate=result.estimate,
            low=result.low,
            high=result.high,
            n=result.n,
            skipped=result.skipped,
        )

    def text(self) -> str:
        """`0.448 [0.38, 0.52] n=40`, or why there is no estimate."""
        if self.estimate is None:
            return f"- ({self.skipped})" if self.skipped else "-"
        text = _number(self.estimate)
        if self.low is not None and self.high is not None:
            text += f" [{_number(self.low)}, {_number(self.high)}]"
        return text + f" n={self.n}"


class Headline(BaseModel):
    """The table a paradigm's results lead with: its values and the study's layout."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str
    rows: list[HeadlineValue]
    index: list[str] = Field(description="Cell keys that label the rows (e.g. model).")
    columns: list[str] = Field(description="Cell keys spread across columns (e.g. k).")
    note: str = ""

    def frame(self) -> pd.DataFrame:
        """One row per value: cell keys, measure, estimate, low, high, n, skipped."""
        import pandas as pd

        records = [{**value.cell, **value.model_dump(exclude={"cell"})} for value in self.rows]
        return pd.DataFrame(records)

    def label(self, value: HeadlineValue) -> str:
        """The column `pivot` puts `value` in: its measure and its levels of `columns`."""
        return " ".join([value.measure, *(f"{k}={value.cell.get(k)}" for k in self.columns)])

    def ordered(self) -> list[HeadlineValue]:
        """The values by measure (in the order they first appear), then by their levels of
        `columns` in natural order (k = 0, 1, 3; not the order the cells came in)."""
        from backchannel.analysis._typed import _natural

        first = {m: i for i, m in reversed(list(enumerate(v.measure for v in self.rows)))}
        return sorted(
            self.rows,
            key=lambda v: (
                first[v.measure],
                tuple(_natural(v.cell.get(k)) for k in self.columns),
            ),
        )

    def pivot(self) -> pd.DataFrame:
        """The study's layout: rows by `index`, columns by measure and `columns`, each cell
        `estimate [low, high] n=N` (text)."""
        import pandas as pd

        records = []
        for value in self.rows:
            records.append(
                {
                    **{k: value.cell.get(k) for k in self.index},
                    "column": self.label(value),
                    "text": value.text(),
                }
            )
        if not records:
            return pd.DataFrame(columns=self.index)
        frame = pd.DataFrame(records)
        order = [self.label(value) for value in self.ordered()]
        order = list(dict.fromkeys(order))
        if not self.index:
            return frame.set_index("column")[["text"]].T.reset_index(drop=True)[order]
        wide = frame.pivot_table(
            index=self.index, columns="column", values="text", aggfunc="first", sort=False
        )
        return wide.reindex(columns=order).reset_index().rename_axis(columns=None)


class StudyValue(BaseModel):
    """One published value: the measure, the cell it belongs to, the study's model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    measure: str
    cell: dict[str, Any] = Field(default_factory=dict)
    value: float
    low: float | None = None
    high: float | None = None
    model: str = Field(description="The study's model, or `pooled` for a value over models.")
    where: str = Field("", description="Where in the study (table, figure, section).")


class Study(BaseModel):
    """A study's published headline values and how to cite it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    citation: str
    values: list[StudyValue]
    note: str = ""


class StudyComparison(BaseModel):
    """A published value beside the run's estimate of the same measure in a matching cell."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    measure: str
    cell: dict[str, Any]
    study_model: str
    published: float
    published_low: float | None
    published_high: float | None
    where: str
    run_cell: dict[str, Any]
    run: HeadlineValue | None
    inside: bool | None
    """Whether the published value lies inside the run's interval (None: no interval)."""


def load_study(package: str) -> Study | None:
    """The `study.yaml` shipped in a paradigm's package, if it has one."""
    import yaml

    entry = resources.files(package) / STUDY_FILE
    if not entry.is_file():
        return None
    return Study.model_validate(yaml.safe_load(entry.read_text(encoding="utf-8")))


def compare_study(headline: Headline, study: Study) -> list[StudyComparison]:
    """Each published value beside every run value of its measure whose cell agrees with the
    published cell on every key the two share (so the run's models each get a row)."""
    rows: list[StudyComparison] = []
    for published in study.values:
        matches: list[HeadlineValue | None] = [
            value
            for value in headline.rows
            if value.measure == published.measure and _agrees(value.cell, published.cell)
        ]
        for value in matches or [None]:  # an unmatched value is still listed
            inside = None
            if value is not None and value.low is not None and value.high is not None:
                inside = value.low <= published.value <= value.high
            rows.append(
                StudyComparison(
                    measure=published.measure,
                    cell=published.cell,
                    study_model=published.model,
                    published=published.value,
                    published_low=published.low,
                    published_high=published.high,
                    where=published.where,
                    run_cell={} if value is None else value.cell,
                    run=value,
                    inside=inside,
                )
            )
    return rows


def comparison_frame(rows: Sequence[StudyComparison]) -> pd.DataFrame:
    """The comparison as a table: measure, published cell and model, published value, the
    run's cell and estimate, and whether the published value lies inside the run's interval."""
    import pandas as pd

    records = []
    for row in rows:
        published = _number(row.published)
        if row.published_low is not None and row.published_high is not None:
            published += f" [{_number(row.published_low)}, {_number(row.published_high)}]"
        records.append(
            {
                "measure": row.measure,
                "cell": _cell_text(row.cell),
                "study model": row.study_model,
                "published": published,
                "run cell": _cell_text(row.run_cell) if row.run is not None else "no such cell",
                "run": row.run.text() if row.run is not None else "-",
                "inside": {True: "yes", False: "no", None: "-"}[row.inside],
                "where": row.where,
            }
        )
    return pd.DataFrame(records)


def _agrees(run: Mapping[str, Any], published: Mapping[str, Any]) -> bool:
    """Every key of the published cell is a key of the run's cell, at the same level."""
    return all(key in run and str(run[key]) == str(level) for key, level in published.items())


def _cell_text(cell: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in cell.items()) or "all"


def _number(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}"
