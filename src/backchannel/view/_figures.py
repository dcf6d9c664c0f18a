"""Calls a run's paradigm view (`Paradigm.view`) on rows the reader read: the figures of a page
of conversations, and the panels of one conversation's page, as JSON for the front end.

A view that fails is reported on the page (its error, in one line), never a failed request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.paradigms import Column, View


def _failure(error: Exception) -> str:
    return f"the paradigm's view failed: {type(error).__name__}: {error}"


class Figures:
    """The view of one run (found by its paradigm's name when first needed)."""

    def __init__(self, paradigm: str) -> None:
        self.paradigm = paradigm
        self._view: View | None = None
        self._found = False

    @property
    def view(self) -> View | None:
        if not self._found:
            from backchannel.view._views import view_of

            self._view, self._found = view_of(self.paradigm), True
        return self._view

    def columns(self, manifest: Mapping[str, Any]) -> tuple[Column, ...]:
        view = self.view
        return () if view is None else view.columns_for(manifest)

    @property
    def reads(self) -> frozenset[str]:
        view = self.view
        return frozenset() if view is None or view.rows is None else view.reads

    @property
    def has_rows(self) -> bool:
        view = self.view
        return view is not None and view.rows is not None

    def rows(
        self,
        manifest: Mapping[str, Any],
        conversations: Sequence[Mapping[str, Any]],
        events: Iterable[Mapping[str, Any]],
        labels: Iterable[Mapping[str, Any]],
        judge: str | None,
    ) -> dict[str, dict[str, Any]]:
        """conversation id -> {"metrics": values (and `_note`), "badges": [...]}."""
        from backchannel.paradigms import ViewOptions, as_json
        from backchannel.view._tables import tables_of

        view = self.view
        out: dict[str, dict[str, Any]] = {
            str(c["conversation_id"]): {"metrics": {}, "badges": []} for c in conversations
        }
        if view is None or view.rows is None or not conversations:
            return out
        done = [c for c in conversations if c["status"] == "done"]
        for c in conversations:
            if c["status"] != "done":
                out[str(c["conversation_id"])]["metrics"] = {
                    "_note": f"conversation {c['status']}: no metrics"
                }
        if not done:
            return out
        tables = tables_of(manifest, conversations, events, labels)
        try:
            with tables.reuse():
                found = view.rows(tables, ViewOptions(judge=judge))
        except Exception as error:  # a view's bug shows on the page, it does not fail it
            for c in done:
                out[str(c["conversation_id"])]["metrics"] = {"_note": _failure(error)}
            return out
        for c in done:
            cid = str(c["conversation_id"])
            row = found.get(cid)
            if row is None:
                out[cid]["metrics"] = {"_note": "the paradigm's view gives no figures for it"}
                continue
            metrics: dict[str, Any] = {str(k): v for k, v in row.values.items()}
            if row.note:
                metrics["_note"] = row.note
            out[cid] = {"metrics": metrics, "badges": as_json(list(row.badges))}
        return out

    def page(
        self,
        manifest: Mapping[str, Any],
        conversation: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        labels: Iterable[Mapping[str, Any]],
        judge: str | None,
    ) -> dict[str, Any] | None:
        """The conversation's page as JSON (`panels`, `badges`), its error, or None (no view)."""
        from backchannel.paradigms import ViewOptions, as_json
        from backchannel.view._tables import tables_of

        view = self.view
        if view is None or view.page is None:
            return None
        tables = tables_of(manifest, [conversation], events, labels)
        try:
            with tables.reuse():
                found = view.page(tables, str(conversation["conversation_id"]), ViewOptions(judge))
        except Exception as error:
            return {"judge": judge, "panels": [], "badges": [], "error": _failure(error)}
        return {"judge": judge, **as_json(found)}

    def round_labels(self, rounds: Iterable[int]) -> dict[str, str]:
        """Each round number of a conversation as the paradigm names it."""
        view = self.view
        if view is None or view.round_label is None:
            return {}
        labels = {}
        for number in sorted(set(rounds)):
            try:
                labels[str(number)] = view.label(number)
            except (ValueError, KeyError):
                labels[str(number)] = str(number)
        return labels
