"""Turn a run's tidy tables into deliberations: ballots, scores and Delphi revisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.paradigms.council._voting import Ballot

RANKING_NAME = "ranking"
REVISED_NAME = "revised"
VERIFICATION_NAME = "verification"


@dataclass(frozen=True)
class Deliberation:
    """One finished council conversation, as ballots ready for tallying."""

    conversation_id: str
    scenario: str
    pool: str
    delphi: str
    options: tuple[str, ...]
    ballots: tuple[Ballot, ...]
    revised: tuple[Ballot, ...] = ()
    invalid_rankings: int = 0
    invalid_revisions: int = 0
    """Delphi revisions that were asked for but gave no valid ranking (counted, never dropped)."""
    asked_to_revise: frozenset[str] = frozenset()
    """Evaluators the Delphi round asked to revise, whether or not their answer was valid."""
    failed_scores: int = 0
    values: dict[str, str] = field(default_factory=dict)
    """Every evaluator of the roster and its value, including those whose ranking failed."""
    cell: dict[str, Any] = field(default_factory=dict)
    """The conversation's level of every factor the run declared (`Design.levels`)."""

    def __post_init__(self) -> None:
        if self.pool not in ("A", "B"):
            raise ValueError(f"pool must be 'A' or 'B', got {self.pool!r}")
        if len(self.options) < 2:
            raise ValueError(f"{self.conversation_id}: a council needs at least two options")


def _level(meta: dict[str, Any], row: pd.Series, name: str, default: str) -> str:
    """The conversation's pool, Delphi variant or scenario as it ran: the protocol records it in
    the conversation's meta (a setting as well as a factor can choose it); older runs fall back
    to the factor column."""
    value = meta.get(name)
    if value is None:
        value = row.get(name)
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return default
    return str(value)


def _valid_ranking(value: Any, options: tuple[str, ...]) -> tuple[str, ...] | None:
    ranking = value.get("ranking") if isinstance(value, dict) else value
    if not isinstance(ranking, list) or sorted(map(str, ranking)) != sorted(options):
        return None
    return tuple(str(option) for option in ranking)


def _options(meta: dict[str, Any], rankings: pd.DataFrame) -> tuple[str, ...]:
    declared = meta.get("options")
    if declared:
        return tuple(str(o) for o in declared)
    seen: set[str] = set()
    for value in rankings["value"]:
        ranking = value.get("ranking") if isinstance(value, dict) else None
        if isinstance(ranking, list):
            seen.update(map(str, ranking))
    return tuple(sorted(seen))


def deliberations(tables: RunTables) -> list[Deliberation]:
    """Every finished conversation of the run as a Deliberation, in conversation order."""
    events = tables.events_of()
    by_conversation = {cid: frame for cid, frame in events.groupby("conversation_id", sort=False)}
    done = tables.done_conversations()
    levels = Design.of(tables).levels(done)
    out: list[Deliberation] = []
    for _, row in done.iterrows():
        cid = str(row["conversation_id"])
        frame = by_conversation.get(cid, events.iloc[0:0])
        meta = row["meta"]
        rankings = frame[frame["kind"] == "ranking"]
        options = _options(meta, rankings)
        scores, failed_scores = _scores(frame)
        initial, invalid, values = _ballots(rankings, RANKING_NAME, options, scores)
        revised, invalid_revisions, asked = _ballots(rankings, REVISED_NAME, options, scores)
        out.append(
            Deliberation(
                conversation_id=cid,
                scenario=_level(meta, row, "scenario", str(row["item_id"])),
                pool=_level(meta, row, "pool", "A"),
                delphi=_level(meta, row, "delphi", "none"),
                options=options,
                ballots=tuple(initial),
                revised=tuple(revised),
                invalid_rankings=invalid,
                invalid_revisions=invalid_revisions,
                asked_to_revise=frozenset(asked),
                failed_scores=failed_scores,
                values=values,
                cell=dict(levels[cid]),
            )
        )
    return out


def _scores(frame: pd.DataFrame) -> tuple[dict[str, float], int]:
    rows = frame[(frame["kind"] == "score") & (frame["name"] == VERIFICATION_NAME)]
    scores: dict[str, float] = {}
    failed = 0
    for _, event in rows.iterrows():
        meta, value = event["meta"], event["value"]
        if event["status"] != "ok" or not isinstance(value, int | float):
            failed += 1
            continue
        scores[str(meta["evaluator"])] = float(value)
    return scores, failed


def _ballots(
    rankings: pd.DataFrame, name: str, options: tuple[str, ...], scores: dict[str, float]
) -> tuple[list[Ballot], int, dict[str, str]]:
    ballots: list[Ballot] = []
    invalid = 0
    values: dict[str, str] = {}
    for _, event in rankings[rankings["name"] == name].iterrows():
        evaluator = str(event["agent"])
        value_name = str(event["meta"].get("value", ""))
        values[evaluator] = value_name
        ranking = _valid_ranking(event["value"], options) if event["status"] == "ok" else None
        if ranking is None:
            invalid += 1
            continue
        ballots.append(Ballot(evaluator, value_name, ranking, scores.get(evaluator)))
    return ballots, invalid, values
