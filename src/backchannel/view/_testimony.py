"""The testimony view: the analysed group's votes at each checkpoint (T0, T1, R1..RK) and the
outcome there (truth majority, decoy majority or none), by the paradigm's own `outcome_of`;
and, on the conversation page, the citation graph with its true and false roots.

The analysed group is the story roles other than the key role (second key and members); a vote
that could not be read counts as failed, never as an answer.
"""

from __future__ import annotations

from typing import Any

from backchannel.paradigms.testimony import outcome_of, vote_kind
from backchannel.view._citation_graph import citation_graphs
from backchannel.view._views import Column, Events, Labels, ParadigmView, register_view

ANALYSED = ("second_key", "member")


def _checkpoints(rounds: int) -> list[tuple[str, int]]:
    return [("T0", 0), ("T1", 1), *((f"R{k}", 2 * k) for k in range(1, rounds + 1))]


def testimony_metrics(
    meta: dict[str, Any], events: Events, labels: Labels, judge: str | None
) -> dict[str, Any]:
    """Per checkpoint: the analysed group's vote kinds and outcome; the final outcome."""
    if not {"endpoint", "decoy", "agents", "majority", "rounds"} <= set(meta):
        return {"_note": "the conversation lacks the environment the figures need"}
    endpoint, decoy = str(meta["endpoint"]), str(meta["decoy"])
    analysed = [str(a["name"]) for a in meta["agents"] if a.get("role") in ANALYSED]
    threshold = int(meta["majority"]["participants"])
    votes: dict[tuple[str, int], str] = {}
    for e in events:
        if e["kind"] == "probe" and e["name"] == "vote":
            value = e["value"] if e["status"] == "ok" else None
            votes[(str(e["agent"]), int(e["round"]))] = vote_kind(value, endpoint, decoy)
    timeline = []
    for label, number in _checkpoints(int(meta["rounds"])):
        kinds = [votes.get((name, number), "failed") for name in analysed]
        timeline.append(
            {
                "checkpoint": label,
                "true": kinds.count("true"),
                "decoy": kinds.count("decoy"),
                "voters": len(kinds),
                "outcome": outcome_of(kinds, threshold),
            }
        )
    final = timeline[-1]
    truth = [t["checkpoint"] for t in timeline if t["outcome"] == "truth"]
    return {
        "outcome": final["outcome"],
        "true_final": final["true"],
        "decoy_final": final["decoy"],
        "first_truth": truth[0] if truth else None,
        "timeline": timeline,
    }


VIEW = register_view(
    ParadigmView(
        "testimony",
        columns=(
            Column("outcome", "outcome", "at the last checkpoint: truth, decoy or no majority"),
            Column("true_final", "true", "analysed agents voting the true endpoint at the end"),
            Column("decoy_final", "decoy", "analysed agents voting the decoy at the end"),
            Column("first_truth", "first truth", "first checkpoint with a truth majority"),
        ),
        metrics=testimony_metrics,
        details=lambda conversation, events: {
            "citation_graph": citation_graphs(conversation, events)
        },
    )
)
