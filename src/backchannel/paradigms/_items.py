"""A paradigm's items with the rows of its data that became none: failures are data, so a row
dropped (no valid false answer, an answer without letters) is named with its reason in the
run's output, `status` and the manifest, never left out without a word."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from backchannel.engine import Item


@dataclass(frozen=True, slots=True)
class SkippedItem:
    """One row that became no item: where it came from, which it was, and why."""

    source: str
    """The data it came from (a dataset's name)."""
    item: str
    """The row's item id in that data."""
    reason: str
    kept_before: int = 0
    """How many items came before it, so a limit on the items drops the skips past it too."""

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "item": self.item, "reason": self.reason}


class ItemList(list[Item]):
    """What `Paradigm.items` may return instead of a plain list: the items, and the rows of the
    data that became none (`skipped`)."""

    def __init__(self, items: Iterable[Item] = (), skipped: Iterable[SkippedItem] = ()) -> None:
        super().__init__(items)
        self.skipped: list[SkippedItem] = list(skipped)

    def first(self, limit: int) -> ItemList:
        """The first `limit` items and the rows skipped before the last of them."""
        return ItemList(self[:limit], [s for s in self.skipped if s.kept_before < limit])


def skipped_of(items: list[Item]) -> list[SkippedItem]:
    """The skipped rows a paradigm reported with its items (none for a plain list)."""
    return list(items.skipped) if isinstance(items, ItemList) else []
