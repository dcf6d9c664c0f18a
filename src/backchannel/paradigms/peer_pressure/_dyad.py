"""Group versus dyad: does a room of ten infect more than one adversary facing one agent?"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, paired_bootstrap_diff_ci
from backchannel.paradigms.peer_pressure._infection import SEED, final_private_infection

GROUP_AGENTS = 10
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


def _contrast(per_conversation: pd.DataFrame, k: int, seed: int) -> dict[str, Any]:
    keys = [c for c in ("model", "dataset") if c in per_conversation.columns] + ["item_id"]
    at_k = per_conversation[per_conversation["k"] == k]
    group = _item_means(at_k[at_k["n_agents"] == GROUP_AGENTS], keys)
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
    """FPI of the ten-agent group minus FPI of the dyad on the same items, at the given k.

    Items are paired by (model, dataset, item_id) after averaging replicates; the interval is a
    paired bootstrap. `initially_true` repeats it over agents that answered true at checkpoint 0.
    Returns None when the run has no `k` or `n_agents` factor.
    """
    conversations = tables.conversations
    if "k" not in conversations.columns or "n_agents" not in conversations.columns:
        return None
    return {
        "k": k,
        "all_agents": _contrast(final_private_infection(tables, judge), k, seed),
        "initially_true": _contrast(
            final_private_infection(tables, judge, initially_true_only=True), k, seed
        ),
    }
