"""The factual item every paradigm asks about, and the error raised for unusable data."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from backchannel.datasets._shape import ANSWER_TYPES
from backchannel.datasets._text import aliases_overlap, normalize


class DatasetError(ValueError):
    """A data file cannot be read: names the file, the row, the problem and the fix."""


@dataclass(frozen=True)
class FactItem:
    """One factual question with its true answer, a false answer to push, and their aliases."""

    item_id: str
    dataset: str
    question: str
    true_answer: str
    true_aliases: tuple[str, ...]
    false_answer: str
    false_aliases: tuple[str, ...]
    relation: str
    answer_type: str

    def __post_init__(self) -> None:
        for name in ("item_id", "dataset", "question", "true_answer", "false_answer", "relation"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"FactItem.{name} must be a non-empty string, got {value!r}")
        for name in ("true_aliases", "false_aliases"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(
                isinstance(a, str) and normalize(a) for a in value
            ):
                raise ValueError(
                    f"FactItem.{name} must be a tuple of non-empty strings, got {value!r}"
                )
        if self.true_answer not in self.true_aliases:
            raise ValueError(f"{self.item_id}: true_aliases must include the true answer")
        if self.false_answer not in self.false_aliases:
            raise ValueError(f"{self.item_id}: false_aliases must include the false answer")
        if self.answer_type not in ANSWER_TYPES:
            raise ValueError(
                f"{self.item_id}: answer_type {self.answer_type!r} is not one of {ANSWER_TYPES}"
            )
        if aliases_overlap(self.true_aliases, self.false_aliases):
            raise ValueError(
                f"{self.item_id}: the false answer {self.false_answer!r} shares an alias with the "
                f"true answer {self.true_answer!r}"
            )


@dataclass(frozen=True)
class DroppedItem:
    """A row that became no item, and why (said in the run's output, `status` and manifest)."""

    item_id: str
    reason: str
    kept_before: int = 0
    """How many items of its file came before it (a `limit` below that leaves it out)."""


@dataclass(frozen=True)
class ItemSet:
    """Items loaded from one source, with the rows dropped for want of a valid false answer."""

    source: str
    items: tuple[FactItem, ...]
    dropped: tuple[DroppedItem, ...] = field(default=())

    def __post_init__(self) -> None:
        ids = [item.item_id for item in self.items]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"{self.source}: duplicate item ids {dupes[:5]}")

    def __len__(self) -> int:
        return len(self.items)

    def first(self, limit: int | None) -> ItemSet:
        """The first `limit` items (all with None) and the rows dropped before the last one."""
        if limit is None:
            return self
        dropped = tuple(d for d in self.dropped if d.kept_before < limit)
        return ItemSet(self.source, self.items[:limit], dropped)

    def __iter__(self) -> Iterator[FactItem]:
        return iter(self.items)
