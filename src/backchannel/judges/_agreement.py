"""Agreement of two judges on the same events, and relabel reweighting.

Shared by every paradigm: percent agreement, Cohen's kappa and the confusion table of the events
both judges labelled validly, and the transfer rates P(B says x | A's label) that re-weight an
outcome counted under judge A by how judge B would have labelled it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, cohens_kappa
from backchannel.judges._target import Target

_KEY = ["conversation_id", "seq"]


def valid_labels(tables: RunTables, judge: str) -> pd.DataFrame:
    """One judge's ok labels: conversation_id, seq, label (the last one stored per event)."""
    labels = tables.labels_for(judge)
    labels = labels[(labels["status"] == "ok") & labels["label"].notna()]
    frame = labels[["conversation_id", "event_seq", "label"]].rename(columns={"event_seq": "seq"})
    frame = frame.astype({"seq": "int64", "label": str})
    return frame.drop_duplicates(_KEY, keep="last")


def paired_labels(
    tables: RunTables, judge_a: str, judge_b: str, events: pd.DataFrame
) -> pd.DataFrame:
    """The `events` (keyed by conversation_id and seq) that both judges labelled validly, with
    the two labels as columns `a` and `b`."""
    keys = events[_KEY].astype({"seq": "int64"})
    first = valid_labels(tables, judge_a).rename(columns={"label": "a"})
    second = valid_labels(tables, judge_b).rename(columns={"label": "b"})
    return keys.merge(first, on=_KEY, how="inner").merge(second, on=_KEY, how="inner")


def target_keys(targets: Sequence[Target]) -> pd.DataFrame:
    """The (conversation_id, seq) keys of targets, for `paired_labels`."""
    return pd.DataFrame(
        {
            "conversation_id": [t.conversation_id for t in targets],
            "seq": pd.Series([t.event_seq for t in targets], dtype="int64"),
        }
    )


def agreement(pairs: pd.DataFrame, judge_a: str, judge_b: str) -> dict[str, Any]:
    """n, percent agreement, Cohen's kappa (`skipped` says why there is none) and the confusion
    table (rows A, columns B, over every label either judge gave) of paired labels `a` and `b`."""
    result = cohens_kappa(pairs["a"], pairs["b"], names=(judge_a, judge_b))
    return {
        "n": result.n,
        "percent_agreement": result.percent_agreement,
        "kappa": result.kappa,
        "skipped": result.skipped,
        "confusion": result.confusion,
    }


def confusion_mapping(confusion: pd.DataFrame) -> dict[str, dict[str, int]]:
    """A confusion table as {A label: {B label: count}}, for JSON."""
    return {
        str(a): {str(b): int(count) for b, count in row.items()}
        for a, row in confusion.to_dict(orient="index").items()
    }


def transfer_rates(pairs: pd.DataFrame, label: str) -> pd.Series:
    """P(judge B says `label` | judge A's label), over paired labels `a` and `b`."""
    return (pairs["b"] == label).groupby(pairs["a"]).mean().astype(float)


def reweight(labels: pd.Series, rates: pd.Series) -> pd.Series:
    """Each judge-A label replaced by judge B's chance of saying the outcome label for it; NaN
    where the A label never occurs among the paired labels (count those, never drop them)."""
    return labels.map(rates).astype(float)


@dataclass(frozen=True)
class Relabelling:
    """An outcome counted under judge A, re-weighted by how judge B relabels A's labels.

    `name` keys it in `agree --json`; `label` is the outcome label (e.g. manipulated);
    `transfer` P(B = label | A label); `without_transfer` the units (`unit`, e.g. agents) whose
    A label had no rate; `by_cell` the outcome and its re-weighted value per cell.
    """

    name: str
    label: str
    transfer: dict[str, float]
    without_transfer: int
    unit: str = "units"
    by_cell: pd.DataFrame = field(default_factory=pd.DataFrame)

    def as_dict(self) -> dict[str, Any]:
        return {
            "transfer": dict(self.transfer),
            f"{self.unit}_without_transfer": self.without_transfer,
            "by_cell": self.by_cell,
        }
