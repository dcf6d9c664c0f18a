"""Metrics of the discussion paradigm: how private answers move and converge.

- answer change rate: share of agents whose private answer at the last checkpoint differs from
  their answer at checkpoint 0 (answers compared after lower-casing and dropping punctuation);
- final agreement: share of agents whose last private answer equals the most common one;
both per conversation, then averaged over conversations with a bootstrap interval.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, bootstrap_mean_ci


def normalise_answer(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(text).lower())).strip()


def conversation_figures(tables: RunTables) -> pd.DataFrame:
    """One row per conversation: agents, answer change rate, final agreement, failed probes."""
    probes = tables.events[(tables.events["kind"] == "probe") & (tables.events["name"] == "answer")]
    rows = []
    for conversation_id, group in probes.groupby("conversation_id", sort=True):
        failed = int((group["status"] != "ok").sum())
        ok = group[group["status"] == "ok"].copy()
        ok["answer"] = ok["text"].map(normalise_answer)
        first_checkpoint, last_checkpoint = group["round"].min(), group["round"].max()
        first = ok[ok["round"] == first_checkpoint].set_index("agent")["answer"]
        last = ok[ok["round"] == last_checkpoint].set_index("agent")["answer"]
        both = first.index.intersection(last.index)
        change = float((first[both] != last[both]).mean()) if len(both) else float("nan")
        agreement = float((last == last.mode().iloc[0]).mean()) if len(last) else float("nan")
        rows.append(
            {
                "conversation_id": conversation_id,
                "agents": int(group["agent"].nunique()),
                "answer_change_rate": change,
                "final_agreement": agreement,
                "failed_probes": failed,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "conversation_id",
            "agents",
            "answer_change_rate",
            "final_agreement",
            "failed_probes",
        ],
    )


def discussion_metrics(tables: RunTables) -> dict[str, Any]:
    figures = conversation_figures(tables)
    result: dict[str, Any] = {"conversations": len(figures)}
    for column in ("answer_change_rate", "final_agreement"):
        values = figures[column].dropna()
        result[column] = bootstrap_mean_ci(values.to_numpy(), seed=0).as_dict()
    result["failed_probes"] = int(figures["failed_probes"].sum()) if len(figures) else 0
    result["per_conversation"] = figures.to_dict(orient="records")
    return result
