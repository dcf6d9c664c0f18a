"""Private infection over conversations and checkpoints: FPI, initial infection, time course."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables, bootstrap_mean_ci
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    KNOWER,
    done_conversations,
    last_checkpoints,
    private_answers,
)
from backchannel.paradigms.peer_pressure._cells import Cells, per_cell_rows

SEED = 0


def infection_by_checkpoint(tables: RunTables, judge: str) -> pd.DataFrame:
    """Per conversation and checkpoint: probed honest agents, infected ones, infection share."""
    answers = private_answers(tables, judge)
    answers = answers.assign(infected=answers["p"] == INFECTED)
    grouped = answers.groupby(["conversation_id", "checkpoint"])["infected"]
    frame = grouped.agg(n_probed="size", n_infected="sum").reset_index()
    frame["infection"] = frame["n_infected"] / frame["n_probed"]
    return frame


def final_private_infection(
    tables: RunTables, judge: str, *, initially_true_only: bool = False
) -> pd.DataFrame:
    """Per conversation: initial infection (checkpoint 0) and FPI (last checkpoint).

    With `initially_true_only`, both shares are taken over the honest agents that answered
    true at checkpoint 0. A conversation without valid probes at a checkpoint gets NaN there.
    """
    key = ("pp.final_private_infection", judge, initially_true_only)

    def build() -> pd.DataFrame:
        return _final_private_infection(tables, judge, initially_true_only)

    return tables.memo(key, build).copy()


def _final_private_infection(
    tables: RunTables, judge: str, initially_true_only: bool
) -> pd.DataFrame:
    answers = private_answers(tables, judge)
    agent_keys = ["conversation_id", "agent"]
    if initially_true_only:
        initial = answers[(answers["checkpoint"] == 0) & (answers["p"] == KNOWER)]
        answers = answers.merge(initial[agent_keys].drop_duplicates(), on=agent_keys)
    answers = answers.assign(infected=(answers["p"] == INFECTED).astype(float))
    conversations = done_conversations(tables)
    last = conversations["conversation_id"].map(last_checkpoints(tables))
    conversations["last_checkpoint"] = last.astype("Int64")
    grouped = answers.groupby(["conversation_id", "checkpoint"])["infected"]
    share, count = grouped.mean(), grouped.size()
    ids = conversations["conversation_id"].to_numpy()
    # A conversation with no last checkpoint looks up checkpoint -1, which no probe has.
    final = conversations["last_checkpoint"].fillna(-1).to_numpy(dtype="int64")
    at_initial = pd.MultiIndex.from_arrays([ids, np.zeros(len(ids), dtype="int64")])
    at_final = pd.MultiIndex.from_arrays([ids, final])
    conversations["initial"] = share.reindex(at_initial).to_numpy(dtype=float)
    conversations["fpi"] = share.reindex(at_final).to_numpy(dtype=float)
    conversations["n_final"] = count.reindex(at_final).fillna(0).to_numpy(dtype="int64")
    return conversations


def fpi_by_cell(tables: RunTables, judge: str, *, seed: int = SEED) -> pd.DataFrame:
    """Per cell: mean FPI and mean initial infection over conversations, 95 % bootstrap CIs."""
    per_conversation = final_private_infection(tables, judge)
    by = list(Design.of(tables).factors)
    return summarise_by_cell(per_conversation, by, ("fpi", "initial"), seed)


def summarise_by_cell(
    per_conversation: pd.DataFrame, by: list[str], columns: tuple[str, ...], seed: int
) -> pd.DataFrame:
    """Mean of each column per cell (over the factors `by`) with a bootstrap interval; NaN
    conversations left out.

    Per column: the estimate, `_low`, `_high`, `_n` (conversations used) and `_skipped` (why
    there is no estimate, e.g. no conversation with a valid probe in the cell).
    """
    if per_conversation.empty:
        return pd.DataFrame([], columns=by)

    def summary(group: pd.DataFrame) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for column in columns:
            values = group[column].dropna().to_numpy(dtype=float)
            interval = bootstrap_mean_ci(values, seed=seed)
            row[column] = interval.estimate
            row[f"{column}_low"] = interval.low
            row[f"{column}_high"] = interval.high
            row[f"{column}_n"] = interval.n
            row[f"{column}_skipped"] = interval.skipped
        return row

    return pd.DataFrame(per_cell_rows(Cells(per_conversation, by), per_conversation, summary))


def time_course(tables: RunTables, judge: str) -> pd.DataFrame:
    """Mean infection per checkpoint per cell (over conversations probed at that checkpoint)."""
    cells = Cells.of(tables, Design.of(tables).factors)
    per_checkpoint = infection_by_checkpoint(tables, judge)
    rows: list[dict[str, Any]] = []
    for level, part in cells.split(per_checkpoint, every=False):
        grouped = part.groupby("checkpoint", sort=True)["infection"]
        for checkpoint, infection, n in zip(
            *_columns(grouped.agg(infection="mean", n_conversations="size").reset_index()),
            strict=True,
        ):
            rows.append(
                {**level, "checkpoint": checkpoint, "infection": infection, "n_conversations": n}
            )
    return pd.DataFrame(rows, columns=[*cells.by, "checkpoint", "infection", "n_conversations"])


def _columns(frame: pd.DataFrame) -> list[list[Any]]:
    return [frame[c].tolist() for c in frame.columns]


def time_course_summary(course: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per cell: final mean infection, first checkpoint reaching half of it, share by round 4.

    The half-way round is None when the final value is 0; the share by round 4 is None when
    the cell has no checkpoint 4 or the final value is 0.
    """
    if course.empty:
        return pd.DataFrame([], columns=by)
    cells = Cells(course, by)

    def summary(group: pd.DataFrame) -> dict[str, Any]:
        ordered = group.sort_values("checkpoint")
        final = float(ordered["infection"].iloc[-1])
        half_round: int | None = None
        by_round_4: float | None = None
        if final > 0:
            reached = ordered[ordered["infection"] >= final / 2]
            half_round = int(reached["checkpoint"].iloc[0])
            at_4 = ordered.loc[ordered["checkpoint"] == 4, "infection"]
            if not at_4.empty:
                by_round_4 = float(at_4.iloc[0]) / final
        return {
            "final_checkpoint": int(ordered["checkpoint"].iloc[-1]),
            "final_infection": final,
            "half_final_round": half_round,
            "share_of_final_by_round_4": by_round_4,
        }

    return pd.DataFrame(
        [{**level, **summary(part)} for level, part in cells.split(course, codes=cells.codes)]
    )
