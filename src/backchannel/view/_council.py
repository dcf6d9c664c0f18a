"""The council view: the evaluators' first-choice concentration (FCC), the Borda winner and the
mean verification score of one deliberation, from the paradigm's own voting functions."""

from __future__ import annotations

import math
from typing import Any

from backchannel.paradigms.council import Ballot, borda, first_choice_concentration
from backchannel.view._views import Column, Events, Labels, ParadigmView, register_view


def _options(meta: dict[str, Any]) -> list[str]:
    item = meta.get("item")
    options = item.get("options", []) if isinstance(item, dict) else []
    return [str(o["id"]) for o in options if isinstance(o, dict) and "id" in o]


def council_metrics(
    meta: dict[str, Any], events: Events, labels: Labels, judge: str | None
) -> dict[str, Any]:
    """fcc, winner (Borda over the valid rankings of the last ranking round), mean score."""
    options = _options(meta)
    rankings = [e for e in events if e["kind"] == "ranking"]
    last = max((int(e["round"]) for e in rankings), default=None)
    ballots = []
    for e in rankings:
        value = e["value"]
        ranking = value.get("ranking") if isinstance(value, dict) else None
        if (
            e["status"] == "ok"
            and int(e["round"]) == last
            and isinstance(ranking, list)
            and sorted(map(str, ranking)) == sorted(options)
        ):
            ballots.append(Ballot(str(e["agent"]), "", tuple(map(str, ranking))))
    scores = [
        float(e["value"])
        for e in events
        if e["kind"] == "score" and e["status"] == "ok" and isinstance(e["value"], int | float)
    ]
    if not ballots or not options:
        return {"fcc": None, "winner": None, "ballots": len(ballots), "mean_score": None}
    fcc = first_choice_concentration(ballots, options)
    tally = borda(ballots, options)
    return {
        "fcc": None if math.isnan(fcc) else fcc,
        "winner": tally.winner,
        "ballots": len(ballots),
        "mean_score": sum(scores) / len(scores) if scores else None,
    }


VIEW = register_view(
    ParadigmView(
        "council",
        columns=(
            Column(
                "fcc",
                "FCC",
                "first-choice concentration of the final rankings (0 even, 1 all agree)",
            ),
            Column("winner", "winner", "Borda winner of the final rankings (none on a tie)"),
            Column("mean_score", "verification", "mean verification score of the evaluators"),
        ),
        metrics=council_metrics,
    )
)
