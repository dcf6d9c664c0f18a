"""Divergent turns for the viewer: the turns whose public stance and private answer part ways
(hidden change or public accommodation), decided by the one function the metrics count with
(`backchannel.analysis.divergent_turns`) on the paradigm's own stance pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

KINDS = (("hidden_change", "hidden change"), ("public_accommodation", "public accommodation"))


def divergent_of(tables: RunTables, judge: str | None = None) -> dict[str, Any]:
    """{"turns": [...]} (each with its conversation, cell, agent, role, round, turn and probe
    seq, and kind) in stored order, or {"error": why} when the run's paradigm reads no stance
    pairs or they cannot be read."""
    import pandas as pd

    from backchannel.analysis import Design, classify_pairs, divergent_turns
    from backchannel.errors import ConfigError
    from backchannel.paradigms import AnalysisOptions, get_paradigm

    name = str(tables.manifest.get("paradigm", ""))
    try:
        paradigm = get_paradigm(name)
    except ConfigError as error:
        return {"error": str(error)}
    try:
        with tables.reuse():
            pairs = paradigm.stance_pairs(tables, AnalysisOptions(judge=judge))
    except Exception as error:  # the page shows why instead of failing
        return {"error": f"the stance pairs cannot be read: {type(error).__name__}: {error}"}
    if pairs is None:
        return {"error": f"the {name} paradigm reads no public stances beside private answers"}
    known = set(tables.conversations["conversation_id"].astype(str))
    pairs = pairs[pairs["conversation_id"].astype(str).isin(known)]
    chosen = pairs[divergent_turns(pairs).to_numpy()]
    measures = classify_pairs(chosen)
    levels = Design.of(tables).levels(tables.conversations)
    turns = []
    records = [{str(k): v for k, v in r.items()} for r in chosen.to_dict("records")]
    for position, row in enumerate(records):
        kind = next(label for key, label in KINDS if bool(measures[key].iloc[position]))
        cid = str(row["conversation_id"])
        probe = row["probe_seq"]
        turns.append(
            {
                "conversation_id": cid,
                "cell": levels.get(cid, {}),
                "agent": str(row["agent"]),
                "role": str(row["role"]),
                "round": int(row["round"]),
                "turn_seq": int(row["turn_seq"]),
                "probe_seq": None if pd.isna(probe) else int(probe),
                "kind": kind,
            }
        )
    return {"turns": turns}
