"""A run as a notebook shows it (`Run._repr_html_`, kept apart from the run API): a short
HTML summary of what it is and how far it got, read from the run store's manifest and counts
alone (no events, no metrics), so displaying a large run costs nothing."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

MAX_LEVELS = 8
"""Levels of a factor listed before the rest are counted."""


def run_summary_html(path: Path) -> str:
    """Name, paradigm, conversations by status, the design's factors and levels, and what to
    call next; a run that cannot be read says why in one line."""
    from backchannel.errors import BackchannelError
    from backchannel.store import RunStore

    try:
        store = RunStore(path, readonly=True)
    except (BackchannelError, OSError) as error:
        return f"<p>backchannel run {_e(path)}: cannot be read ({_e(error)})</p>"
    try:
        manifest = store.manifest()
        state = store.run_state()
    finally:
        store.close()
    return _summary(path, manifest, state)


def _summary(path: Path, manifest: dict[str, Any], state: dict[str, Any]) -> str:
    name = manifest.get("name") or Path(path).name
    rows = [
        ("paradigm", str(manifest.get("paradigm", "?"))),
        ("conversations", _counts(state)),
        *[(f"factor {f}", _levels(v)) for f, v in _factors(manifest).items()],
        ("created", _when(manifest.get("created_at"))),
        ("run id", str(manifest.get("run_id", "?"))),
        ("directory", str(path)),
    ]
    body = "".join(
        f'<tr><th style="text-align:left;padding-right:1em">{_e(k)}</th>'
        f'<td style="text-align:left">{_e(v)}</td></tr>'
        for k, v in rows
    )
    hint = (
        "run.metrics().frames() for the tables as DataFrames · run.report() for the HTML "
        f"report · backchannel view {path} for the conversations"
    )
    return (
        f'<div class="backchannel-run"><strong>backchannel run {_e(name)}</strong>'
        f"<table>{body}</table><small>{_e(hint)}</small></div>"
    )


def _counts(state: dict[str, Any]) -> str:
    parts = [f"{state.get(s, 0)} {s.replace('_', ' ')}" for s in ("done", "incomplete", "failed")]
    if state.get("not_started"):
        parts.append(f"{state['not_started']} not started")
    text = ", ".join(parts)
    if state.get("running"):
        return text + " (still running)"
    return text + ("" if state.get("complete") else " (not complete: run it again to resume)")


def _factors(manifest: dict[str, Any]) -> dict[str, Any]:
    resolved = manifest.get("config_resolved")
    levels = resolved.get("factors") if isinstance(resolved, dict) else None
    if isinstance(levels, dict):
        return levels
    return {str(f): None for f in manifest.get("factors", [])}


def _levels(levels: Any) -> str:
    if not isinstance(levels, list):
        return "(levels not recorded)"
    shown = [v if isinstance(v, str) else json.dumps(v) for v in levels[:MAX_LEVELS]]
    more = len(levels) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _when(created: Any) -> str:
    if not isinstance(created, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(created))


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)
