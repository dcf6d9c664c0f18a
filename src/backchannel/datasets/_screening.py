"""Screening: keep the items a model answers correctly and consistently when asked alone."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import pandas as pd

from backchannel.datasets._item import FactItem

_COLUMNS = ["item_id", "relation", "n", "correct", "false", "both", "kept", "reason"]


@dataclass(frozen=True)
class ScreeningResult:
    """The kept items (input order) and one row of rates per item with ``kept`` and ``reason``."""

    items: tuple[FactItem, ...]
    rates: pd.DataFrame

    def __post_init__(self) -> None:
        missing = [c for c in _COLUMNS if c not in self.rates.columns]
        if missing:
            raise ValueError(f"screening rates lack columns {missing}")
        if len(self.items) != int(self.rates["kept"].sum()):
            raise ValueError("screening result: kept items and kept rows disagree")


@cache
def screening_prompt() -> str:
    """The context-free question a screening model is asked (`{question}` is filled in)."""
    return (resources.files("backchannel.datasets.prompts") / "screen.txt").read_text("utf-8")


def _threshold(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be within [0, 1], got {value}")


def screen_items(
    items: Sequence[FactItem],
    labels: Mapping[str, Sequence[str]],
    *,
    min_correct: float = 0.8,
    max_false: float = 0.05,
    max_both: float = 0.10,
    per_relation_cap: int | None = None,
) -> ScreeningResult:
    """Keep items whose context-free answers are mostly true and rarely false or mixed.

    ``labels`` maps item ids to the private labels (true, manipulated, mixed, uncertain) of a
    screening model's answers, one per answer (`backchannel screen` uses the rule judge):
    correct = share ``true``; false = share naming the false answer (``manipulated`` or
    ``mixed``); both = share ``mixed``. Items pass when
    correct >= min_correct, false <= max_false and both <= max_both; then at most
    ``per_relation_cap`` per relation are kept, highest correct rate first, ties by item id.
    An item without answers is excluded with reason ``no answers``.
    """
    for name, value in (("min_correct", min_correct), ("max_false", max_false)):
        _threshold(name, value)
    _threshold("max_both", max_both)
    if per_relation_cap is not None and per_relation_cap < 1:
        raise ValueError(f"per_relation_cap must be >= 1 or None, got {per_relation_cap}")

    rows: list[dict[str, object]] = []
    for item in items:
        given = list(labels.get(item.item_id, ()))
        counts: Counter[str] = Counter(given)
        n = len(given)
        naming = {"correct": ("true",), "false": ("manipulated", "mixed"), "both": ("mixed",)}
        rates = {
            key: (sum(counts[label] for label in kinds) / n if n else float("nan"))
            for key, kinds in naming.items()
        }
        reasons = []
        if n == 0:
            reasons.append("no answers")
        else:
            if rates["correct"] < min_correct:
                reasons.append(f"correct < {min_correct:g}")
            if rates["false"] > max_false:
                reasons.append(f"false > {max_false:g}")
            if rates["both"] > max_both:
                reasons.append(f"both > {max_both:g}")
        rows.append(
            {
                "item_id": item.item_id,
                "relation": item.relation,
                "n": n,
                **rates,
                "kept": not reasons,
                "reason": "; ".join(reasons),
            }
        )

    if per_relation_cap is not None:
        by_relation: dict[str, list[dict[str, object]]] = defaultdict(list)
        for row in rows:
            if row["kept"]:
                by_relation[str(row["relation"])].append(row)
        for group in by_relation.values():
            group.sort(key=lambda r: (-float(r["correct"]), str(r["item_id"])))  # type: ignore[arg-type]
            for row in group[per_relation_cap:]:
                row["kept"] = False
                row["reason"] = f"relation cap {per_relation_cap}"

    frame = pd.DataFrame(rows, columns=_COLUMNS)
    frame["kept"] = frame["kept"].astype(bool)
    kept_ids = {str(r["item_id"]) for r in rows if r["kept"]}
    kept = tuple(item for item in items if item.item_id in kept_ids)
    return ScreeningResult(items=kept, rates=frame)
