"""Per-conversation figures that need no paradigm knowledge: what was said on which channel,
what the calls cost, which answers were unusable and how each judge labelled the events.

The Inspect export writes them as each sample's scores. Every figure is a count over the tidy
tables, so a reader can recompute it from the Parquet export.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables

Figures = dict[str, dict[str, int]]
"""Score name -> {key: count}, e.g. `{"events": {"public": 12, "direct": 0, "private": 9}}`."""

CHANNELS = ("public", "direct", "private")
NOT_OK = "not_ok"
"""Label key counting a judge's labels whose status is not `ok` (parse failure, refusal...)."""
OTHER = "other"
"""Label key counting `ok` labels outside the paradigm's label sets (a statement's claims)."""


def conversation_figures(tables: RunTables, label_sets: Collection[str]) -> dict[str, Figures]:
    """The figures of every conversation, by conversation id, every key present in each.

    - `events`: events per channel.
    - `usage`: model calls (events with a model), their prompt, completion and reasoning
      tokens, and how many were answered from the response cache.
    - `answers`: unusable answers of those calls, counted as the store counts them (`empty`,
      `unreadable`, `refused`, `errors`).
    - `labels/<judge>`: a judge's labels by label; `label_sets` names the labels counted one by
      one (the paradigm's label sets), any other `ok` label counts as `other`, and labels whose
      status is not `ok` as `not_ok`.
    """
    from backchannel.store import answer_quality

    events = tables.core_events
    labels = tables.labels
    by_conversation = {cid: group for cid, group in events.groupby("conversation_id", sort=False)}
    label_keys = _label_keys(labels, label_sets)
    labelled = {cid: group for cid, group in labels.groupby("conversation_id", sort=False)}
    found: dict[str, Figures] = {}
    for cid in tables.conversations["conversation_id"].astype(str):
        group = by_conversation.get(cid, events.iloc[0:0])
        calls = group[group["model"].astype("str").fillna("") != ""]
        quality = answer_quality(group)
        figures: Figures = {
            "events": {c: int((group["channel"] == c).sum()) for c in CHANNELS},
            "usage": {
                "calls": len(calls),
                "prompt_tokens": int(calls["prompt_tokens"].sum()),
                "completion_tokens": int(calls["completion_tokens"].sum()),
                "reasoning_tokens": int(calls["reasoning_tokens"].sum()),
                "cached": int(calls["cached"].astype(bool).sum()),
            },
            "answers": {k: quality[k] for k in ("empty", "unreadable", "refused", "errors")},
        }
        mine = labelled.get(cid, labels.iloc[0:0])
        for judge, keys in label_keys.items():
            figures[f"labels/{judge}"] = _label_counts(mine[mine["judge"] == judge], keys)
        found[cid] = figures
    return found


def _label_keys(labels: pd.DataFrame, label_sets: Collection[str]) -> dict[str, list[str]]:
    """Per judge in the run: the keys its figures have (the same in every conversation)."""
    known = set(label_sets)
    keys: dict[str, list[str]] = {}
    for judge, group in labels.groupby("judge", sort=True):
        ok = list(group.loc[group["status"] == "ok", "label"])
        named = sorted({label for label in ok if isinstance(label, str) and label in known})
        extra = [OTHER] if any(not isinstance(v, str) or v not in known for v in ok) else []
        keys[str(judge)] = [*named, *extra, NOT_OK]
    return keys


def _label_counts(labels: pd.DataFrame, keys: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(keys, 0)
    for label, status in zip(labels["label"], labels["status"], strict=True):
        if status != "ok":
            counts[NOT_OK] += 1
        elif isinstance(label, str) and label in counts:
            counts[label] += 1
        else:
            counts[OTHER] += 1
    return counts
