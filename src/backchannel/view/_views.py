"""Paradigm views: which per-conversation figures the table shows, registered by paradigm name.

A paradigm's view is one small module that registers a `ParadigmView` here (the Python side:
its table columns and how to compute them from one conversation) and one script in
`static/paradigms/` that draws its conversation page. A paradigm without a view gets the
generic timeline and no metric columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Events = list[dict[str, Any]]
"""One conversation's events: seq, kind, name, round, turn, agent, role, channel, value, status."""
Labels = dict[int, list[dict[str, Any]]]
"""Event seq -> that event's labels (judge, label, status, ...)."""
RowMetrics = Callable[[dict[str, Any], Events, Labels, "str | None"], dict[str, Any]]
Details = Callable[[dict[str, Any], Events], dict[str, Any]]
"""(conversation with its meta and status, events with meta, text and labels) -> extra parts of
the conversation page, by name."""


@dataclass(frozen=True)
class Column:
    """One metric column of the conversations table."""

    key: str
    title: str
    help: str

    def as_json(self) -> dict[str, str]:
        return {"key": self.key, "title": self.title, "help": self.help}


@dataclass(frozen=True)
class ParadigmView:
    """The Python side of a paradigm's view: metric columns and their per-conversation values."""

    paradigm: str
    columns: tuple[Column, ...] = ()
    metrics: RowMetrics | None = None
    needs_done: bool = field(default=True)
    """Metrics of an incomplete or failed conversation are left empty (and say why)."""
    details: Details | None = None
    """What only the conversation page shows (a graph, say), computed when one is opened."""

    def row_metrics(
        self,
        meta: dict[str, Any],
        events: Events,
        labels: Labels,
        judge: str | None,
        *,
        status: str = "done",
    ) -> dict[str, Any]:
        if self.metrics is None:
            return {}
        if self.needs_done and status != "done":
            return {"_note": f"conversation {status}: no metrics"}
        return self.metrics(meta, events, labels, judge)

    def conversation_details(self, conversation: dict[str, Any], events: Events) -> dict[str, Any]:
        return {} if self.details is None else self.details(conversation, events)


_VIEWS: dict[str, ParadigmView] = {}


def register_view(view: ParadigmView) -> ParadigmView:
    """Make `view` the one used for runs of `view.paradigm`."""
    _VIEWS[view.paradigm] = view
    return view


def view_for(paradigm: str) -> ParadigmView:
    """The registered view, or the generic one (no metric columns)."""
    return _VIEWS.get(paradigm) or ParadigmView(paradigm)


def judge_label(labels: list[dict[str, Any]], judge: str | None) -> str | None:
    """The usable label of one event by `judge` (or by the first judge, when none is named)."""
    chosen = [x for x in labels if judge is None or x["judge"] == judge]
    if not chosen:
        return None
    first = chosen[0]
    return str(first["label"]) if first["status"] == "ok" and first["label"] is not None else None
