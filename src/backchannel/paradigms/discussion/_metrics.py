"""Metrics of the discussion paradigm: how private answers move and converge.

- answer change rate: share of agents whose private answer at the last checkpoint differs from
  their answer at checkpoint 0 (answers compared after lower-casing and dropping punctuation);
- final agreement: share of agents whose last private answer equals the most common one;
both per conversation, then averaged over the conversations of each cell of the run's design
(every declared factor separates) with a bootstrap interval.

Computed for all conversations at once (grouped columns, no loop over conversations), as the
other paradigms are: the first and last checkpoint of a conversation are the lowest and highest
round of its probes (failed ones included), and the answers compared are the readable ones.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, bootstrap_mean_ci, cell_groups, jsonable
from backchannel.paradigms.discussion._results import DiscussionMetrics

COLUMNS = ["conversation_id", "agents", "answer_change_rate", "final_agreement", "failed_probes"]
_KEYS = ["conversation_id", "agent"]


_NOT_WORD = re.compile(r"[^\w\s]+")


def normalise_answer(text: str) -> str:
    """Lower-cased, every run of characters that are neither word characters nor whitespace
    made a space, whitespace collapsed to single spaces and stripped."""
    # str.split() splits on exactly the whitespace `\s` matches in a str pattern.
    return " ".join(_NOT_WORD.sub(" ", str(text).lower()).split())


def _normalised(texts: pd.Series) -> pd.Series:
    """`normalise_answer` of every text, each distinct text normalised once."""
    texts = texts.astype(str)
    distinct = pd.unique(texts)
    mapping = {text: normalise_answer(text) for text in distinct}
    return texts.map(mapping)


def conversation_figures(tables: RunTables) -> pd.DataFrame:
    """One row per conversation: agents, answer change rate, final agreement, failed probes."""
    return tables.memo(("discussion", "conversation_figures"), lambda: _figures(tables))


def _figures(tables: RunTables) -> pd.DataFrame:
    events = tables.core_events
    probes = events.loc[
        (events["kind"] == "probe") & (events["name"] == "answer"),
        ["conversation_id", "agent", "round", "status", "text"],
    ]
    if probes.empty:
        return pd.DataFrame([], columns=COLUMNS)
    by_conversation = probes.groupby("conversation_id", sort=True)
    figures = pd.DataFrame(
        {
            "agents": by_conversation["agent"].nunique(),
            "failed_probes": (probes["status"] != "ok").groupby(probes["conversation_id"]).sum(),
        }
    )
    rounds = by_conversation["round"]
    ok = probes.assign(first=rounds.transform("min"), last=rounds.transform("max"))
    ok = ok[ok["status"] == "ok"]
    ok = ok.assign(answer=_normalised(ok["text"]))
    first = ok.loc[ok["round"] == ok["first"], [*_KEYS, "answer"]]
    last = ok.loc[ok["round"] == ok["last"], [*_KEYS, "answer"]]

    # Change: the agents answering readably at both checkpoints, the share whose answer moved.
    paired = first.merge(last, on=_KEYS, suffixes=("_first", "_last"))
    moved = (paired["answer_first"] != paired["answer_last"]).astype(float)
    change = moved.groupby(paired["conversation_id"]).mean()

    # Agreement: the share of final answers equal to the most common one (its count over all).
    counts = last.groupby(["conversation_id", "answer"]).size()
    top = counts.groupby(level="conversation_id").max()
    agreement = top / counts.groupby(level="conversation_id").sum()

    figures["answer_change_rate"] = change.reindex(figures.index).astype(float)
    figures["final_agreement"] = agreement.reindex(figures.index).astype(float)
    figures = figures.reset_index()
    figures["agents"] = figures["agents"].astype(int)
    figures["failed_probes"] = figures["failed_probes"].astype(int)
    return figures[COLUMNS]


def discussion_metrics(tables: RunTables) -> DiscussionMetrics:
    """The run's figures per cell of its design, per conversation, and the whole-run counts."""
    figures = conversation_figures(tables)
    design = Design.of(tables)
    by_cell = [
        {
            **level,
            "conversations": len(part),
            **{
                column: bootstrap_mean_ci(part[column].dropna().to_numpy(), seed=0).as_dict()
                for column in ("answer_change_rate", "final_agreement")
            },
            "failed_probes": int(part["failed_probes"].sum()),
        }
        for level, part in _cells(tables, figures, design)
    ]
    result = {
        "conversations": len(figures),
        "failed_probes": int(figures["failed_probes"].sum()) if len(figures) else 0,
        "by_cell": by_cell,
        "per_conversation": figures.to_dict(orient="records"),
    }
    return DiscussionMetrics.build(jsonable(result), design)


def _cells(
    tables: RunTables, figures: pd.DataFrame, design: Design
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """(levels, figures of its conversations) for every cell of the run's conversations, in
    `cell_groups` order; a cell whose conversations have no private answer gets no figures,
    and a run without factors is one cell."""
    by = design.by()
    if not by:
        return [({}, figures)]
    conversations = tables.conversations.reset_index(drop=True)
    groups = cell_groups(conversations, by, design.levels(conversations))
    ids = figures["conversation_id"].astype(str)
    return [
        (level, figures[ids.isin(part["conversation_id"].astype(str)).to_numpy()])
        for level, part in groups
    ]
