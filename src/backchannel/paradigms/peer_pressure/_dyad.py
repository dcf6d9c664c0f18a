"""Group versus dyad: does a room of N agents infect more than one adversary facing one agent?"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, paired_bootstrap_diff_ci
from backchannel.paradigms.peer_pressure._infection import SEED, final_private_infection

DYAD_AGENTS = 2


def _item_means(per_conversation: pd.DataFrame, keys: list[str]) -> pd.Series:
    """FPI averaged over the replicates of each (model, dataset, item)."""
    return per_conversation.dropna(subset=["fpi"]).groupby(keys)["fpi"].mean()


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


def _contrast(
    per_conversation: pd.DataFrame, k: int, group_agents: int, seed: int
) -> dict[str, Any]:
    keys = [c for c in ("model", "dataset") if c in per_conversation.columns] + ["item_id"]
    at_k = per_conversation[per_conversation["k"] == k]
    group = _item_means(at_k[at_k["n_agents"] == group_agents], keys)
    dyad = _item_means(at_k[at_k["n_agents"] == DYAD_AGENTS], keys)
    result: dict[str, Any] = {"overall": _difference(group, dyad, seed), "by_model": {}}
    if "model" in keys:
        paired = group.index.intersection(dyad.index)
        for model in sorted(set(paired.get_level_values("model"))):
            result["by_model"][str(model)] = _difference(
                group[group.index.get_level_values("model") == model],
                dyad[dyad.index.get_level_values("model") == model],
                seed,
            )
    return result


def group_vs_dyad(
    tables: RunTables, judge: str, *, k: int = 1, seed: int = SEED
) -> dict[str, Any] | None:
    """For every group size N > 2 of the run, FPI of the N-agent group minus FPI of the dyad
    (N = 2) on the same items, at the given k; keyed by N (as text, for JSON).

    Items are paired by (model, dataset, item_id) after averaging replicates; the interval is a
    paired bootstrap. `initially_true` repeats it over agents that answered true at checkpoint 0.
    Returns None when the run has no `k` or `n_agents` factor.
    """
    conversations = tables.conversations
    if "k" not in conversations.columns or "n_agents" not in conversations.columns:
        return None
    everyone = final_private_infection(tables, judge)
    initially_true = final_private_infection(tables, judge, initially_true_only=True)
    sizes = sorted({int(n) for n in conversations["n_agents"].dropna()} - {DYAD_AGENTS})
    return {
        "k": k,
        "dyad_agents": DYAD_AGENTS,
        "by_group_size": {
            str(n): {
                "all_agents": _contrast(everyone, k, n, seed),
                "initially_true": _contrast(initially_true, k, n, seed),
            }
            for n in sizes
        },
    }
