"""Group versus dyad: does a room of N agents infect more than one adversary facing one agent?"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, paired_bootstrap_diff_ci
from backchannel.paradigms.peer_pressure._base import done_conversations
from backchannel.paradigms.peer_pressure._cells import Cells
from backchannel.paradigms.peer_pressure._infection import SEED, final_private_infection

DYAD_AGENTS = 2
ADVERSARIES = 1
"""The contrast's k: one adversary in the N-agent group and in the dyad."""
SUBSETS = ("all_agents", "initially_true")


def _item_means(per_conversation: pd.DataFrame) -> pd.Series:
    """FPI averaged over the replicates of each item."""
    return per_conversation.dropna(subset=["fpi"]).groupby("item_id")["fpi"].mean()


def _difference(group: pd.Series, dyad: pd.Series, seed: int) -> dict[str, Any]:
    both = pd.concat([group.rename("group"), dyad.rename("dyad")], axis=1, join="inner")
    interval = paired_bootstrap_diff_ci(
        both["group"].to_numpy(), both["dyad"].to_numpy(), seed=seed
    )
    return {
        **interval.as_dict(),
        "group_fpi": float(both["group"].mean()) if len(both) else float("nan"),
        "dyad_fpi": float(both["dyad"].mean()) if len(both) else float("nan"),
    }


def adversary_counts(tables: RunTables) -> pd.Series:
    """Adversaries in each finished conversation's room (from its stored roster)."""
    done = tables.done_conversations()
    counts = [
        sum(1 for agent in meta.get("agents", []) if agent.get("role") == "adversary")
        for meta in done["meta"]
    ]
    return pd.Series(counts, index=done["conversation_id"].tolist(), dtype="int64")


def group_vs_dyad(
    tables: RunTables, judge: str, *, seed: int = SEED
) -> list[dict[str, Any]] | None:
    """Per cell of every factor but `n_agents` and every group size N > 2 of the run: FPI of the
    N-agent groups minus FPI of the dyads (N = 2) on the same items, both with one adversary.

    Items are paired by item_id within the cell after averaging replicates; the interval is a
    paired bootstrap. `initially_true` repeats it over agents that answered true at checkpoint
    0. A cell without a one-adversary conversation has no rows. Returns None when `n_agents` is
    not a factor of the run (there is nothing to contrast).
    """
    design = Design.of(tables)
    if "n_agents" not in design.factors:
        return None
    cells = Cells(done_conversations(tables), design.by(pooled=["n_agents"]))
    k = adversary_counts(tables)
    subsets = {
        "all_agents": final_private_infection(tables, judge),
        "initially_true": final_private_infection(tables, judge, initially_true_only=True),
    }
    sizes = sorted({int(n) for n in tables.conversations["n_agents"].dropna()})
    rows: list[dict[str, Any]] = []
    split = {
        name: dict(enumerate(part for _, part in cells.split(frame[_at_k(frame, k)])))
        for name, frame in subsets.items()
    }
    for index, level in enumerate(cells.levels):
        if split["all_agents"][index].empty:
            continue
        for size in (n for n in sizes if n > DYAD_AGENTS):
            for name in SUBSETS:
                part = split[name][index]
                group = _item_means(part[part["n_agents"] == size])
                dyad = _item_means(part[part["n_agents"] == DYAD_AGENTS])
                figures = _difference(group, dyad, seed)
                if group.empty or dyad.empty:  # say which side is missing, not just "no pairs"
                    side = f"room of {size} agents" if group.empty else "dyad"
                    figures["skipped"] = f"no {side} with one adversary and an FPI in this cell"
                rows.append({**level, "group_agents": size, "subset": name, **figures})
    return rows


def _at_k(frame: pd.DataFrame, counts: pd.Series) -> pd.Series:
    return frame["conversation_id"].map(counts) == ADVERSARIES
