"""The conversations table's query: paging, sorting and filters, turned into safe SQL.

Column names come from a fixed list and factor names from the run's manifest; every value is a
bound parameter, so nothing a user types reaches the SQL text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from backchannel.errors import ConfigError

MAX_LIMIT = 500
STATUSES = ("done", "incomplete", "failed")
_SORTS = {
    "position": "c.position",
    "conversation_id": "c.conversation_id",
    "item_id": "c.item_id",
    "status": "c.status",
    "replicate": "c.replicate",
    "finished_at": "c.finished_at",
}


class BadQuery(ConfigError):
    """A list request the viewer cannot answer (unknown sort column, factor or status)."""


def _path(factor: str) -> str:
    """A JSON path to the factor, quoted for use inside an SQL string literal."""
    return ("$." + json.dumps(factor)).replace("'", "''")


@dataclass(frozen=True)
class ListQuery:
    """What one request for the conversations table asks for."""

    offset: int = 0
    limit: int = 50
    sort: str = "position"
    descending: bool = False
    status: str | None = None
    item: str | None = None
    text: str | None = None
    factors: dict[str, str] = field(default_factory=dict)
    """factor name -> the level as JSON text (`3`, `"popqa"`, `true`)."""
    figures: dict[str, str] = field(default_factory=dict)
    """per-conversation figure (a column key of the paradigm's view) -> its value as JSON."""

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise BadQuery(f"offset {self.offset} is negative; pass offset >= 0")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise BadQuery(f"limit {self.limit} is out of range; pass 1..{MAX_LIMIT}")
        if self.status is not None and self.status not in STATUSES:
            raise BadQuery(f"unknown status {self.status!r}; pass one of {', '.join(STATUSES)}")
        for factor, level in self.factors.items():
            try:
                json.loads(level)
            except ValueError:
                raise BadQuery(
                    f'the level of factor {factor!r} must be JSON (e.g. 3 or "popqa"), '
                    f"got {level!r}"
                ) from None
        for key, value in self.figures.items():
            try:
                json.loads(value)
            except ValueError:
                raise BadQuery(
                    f'the value of figure {key!r} must be JSON (e.g. 2 or "decoy"), got {value!r}'
                ) from None

    @property
    def metric(self) -> str | None:
        """The metric column this query sorts by (`metric:fpi`), if any."""
        return self.sort[7:] if self.sort.startswith("metric:") else None

    def order_by(self, factors: list[str]) -> str:
        if self.metric is not None:
            column = "c.position"
        elif self.sort in _SORTS:
            column = _SORTS[self.sort]
        elif self.sort.startswith("factor:") and self.sort[7:] in factors:
            column = f"json_extract(c.cell, '{_path(self.sort[7:])}')"
        else:
            known = [*_SORTS, *(f"factor:{f}" for f in factors), "metric:NAME"]
            raise BadQuery(f"cannot sort by {self.sort!r}; pass one of {', '.join(known)}")
        direction = "DESC" if self.descending else "ASC"
        return f"{column} {direction}, c.position {direction}"

    @classmethod
    def from_params(cls, params: dict[str, str]) -> ListQuery:
        """Read `offset, limit, sort, desc, status, item, q, f.<factor>, m.<figure>` from a
        query string."""

        def number(name: str, default: int) -> int:
            raw = params.get(name)
            if raw in (None, ""):
                return default
            try:
                return int(str(raw))
            except ValueError:
                raise BadQuery(f"{name} must be a whole number, got {raw!r}") from None

        return cls(
            offset=number("offset", 0),
            limit=number("limit", 50),
            sort=params.get("sort") or "position",
            descending=params.get("desc") in ("1", "true"),
            status=params.get("status") or None,
            item=params.get("item") or None,
            text=params.get("q") or None,
            factors={k[2:]: v for k, v in params.items() if k.startswith("f.") and v != ""},
            figures={k[2:]: v for k, v in params.items() if k.startswith("m.") and v != ""},
        )


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def where_clause(query: ListQuery, factors: list[str]) -> tuple[str, list[Any]]:
    """The WHERE clause (over `conversations c`) and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    if query.status:
        parts.append("c.status = ?")
        params.append(query.status)
    if query.item:
        parts.append("c.item_id LIKE ? ESCAPE '\\'")
        params.append(_like(query.item))
    for factor, level in sorted(query.factors.items()):
        if factor not in factors:
            raise BadQuery(
                f"the run has no factor {factor!r}; pass one of {', '.join(factors) or '(none)'}"
            )
        parts.append(f"(c.cell -> '{_path(factor)}') = json(?)")
        params.append(level)
    if query.text:
        pattern = _like(query.text)
        parts.append(
            "(c.item_id LIKE ? ESCAPE '\\' OR c.meta LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM "
            "events e WHERE e.conversation_id = c.conversation_id AND e.text LIKE ? ESCAPE '\\'))"
        )
        params.extend([pattern, pattern, pattern])
    return ("WHERE " + " AND ".join(parts)) if parts else "", params
