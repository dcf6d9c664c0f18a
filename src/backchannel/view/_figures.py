"""Calls a run's paradigm view (`Paradigm.view`) on rows the reader read: the figures of a page
of conversations, and the panels of one conversation's page, as JSON for the front end.

A view that fails is reported on the page (its error, in one line), never a failed request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.paradigms import Column, View
    from backchannel.view._tables import Rows


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
        conversations: Rows,
        events: Rows,
        labels: Rows,
        judge: str | None,
    ) -> dict[str, dict[str, Any]]:
        """conversation id -> {"metrics": values (and `_note`), "badges": [...]}."""
        from backchannel.view._tables import tables_of

        return self.rows_of(tables_of(manifest, conversations, events, labels), judge)

    def rows_of(self, tables: RunTables, judge: str | None) -> dict[str, dict[str, Any]]:
        """`rows` over tables already built."""
        from backchannel.paradigms import ViewOptions, as_json

        view = self.view
        statuses = dict(
            zip(
                tables.conversations["conversation_id"].astype(str),
                tables.conversations["status"].astype(str),
                strict=True,
            )
        )
        out: dict[str, dict[str, Any]] = {cid: {"metrics": {}, "badges": []} for cid in statuses}
        if view is None or view.rows is None:
            return out
        done = [cid for cid, status in statuses.items() if status == "done"]
        for cid, status in statuses.items():
            if status != "done":
                out[cid]["metrics"] = {"_note": f"conversation {status}: no metrics"}
        if not done:
            return out
        try:
            with tables.reuse():
                found = view.rows(tables, ViewOptions(judge=judge))
        except Exception as error:  # a view's bug shows on the page, it does not fail it
            for cid in done:
                out[cid]["metrics"] = {"_note": _failure(error)}
            return out
        for cid in done:
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
        events: Rows,
        labels: Rows,
        judges: list[str | None],
    ) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any] | None]]:
        """One conversation's figures (under the first of `judges`) and its page under each of
        `judges`, as JSON (`panels`, `badges`, or its `error`; None without a view), from one
        build of its tables."""
        from backchannel.view._tables import tables_of

        tables = tables_of(manifest, [conversation], events, labels)
        with tables.reuse():
            figures = self.rows_of(tables, judges[0] if judges else None)
            return figures, [self._page(tables, str(conversation["conversation_id"]), j)
                             for j in judges]  # fmt: skip

    def _page(self, tables: RunTables, cid: str, judge: str | None) -> dict[str, Any] | None:
        from backchannel.paradigms import ViewOptions, as_json

        view = self.view
        if view is None or view.page is None:
            return None
        try:
            found = view.page(tables, cid, ViewOptions(judge))
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
