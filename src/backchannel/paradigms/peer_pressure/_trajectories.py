"""Peer pressure's opinion trajectories for the Friedkin-Johnsen fit: per honest agent and
round, whether it privately holds and publicly says the pushed false answer.

An opinion is 1 for the false answer and 0 otherwise: privately, the main probe's label
`manipulated` (any other label 0); publicly, a turn labelled `endorse` (any other label 0), and
every adversary turn (it pushes the false answer by design). An event that failed or has no
label of the judge is missing (NaN), never 0. An agent's neighbours are the agents whose turns
it hears (the conversation's topology; everyone in a complete room); their expressed mean is
over each neighbour's latest turn it had seen: before its own turn of the round (public), or
by the end of the round (private, read after it). A failed turn was seen by nobody; a turn
without a reading is seen but left out of the mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import OPINION_COLUMNS, RunTables
from backchannel.paradigms.peer_pressure._base import INFECTED, MAIN_PROBE, private_answers

ENDORSE = "endorse"
ADVERSARY, HONEST = "adversary", "honest"


def opinion_trajectories(tables: RunTables, judge: str) -> pd.DataFrame:
    """One row per (finished conversation, honest agent, checkpoint 0..T): `OPINION_COLUMNS`."""
    done = tables.done_conversations()
    answers = private_answers(tables, judge, (MAIN_PROBE,))
    private = {
        (str(c), str(a), int(t)): float(p == INFECTED)
        for c, a, t, p in zip(
            *(answers[c].tolist() for c in ("conversation_id", "agent", "checkpoint", "p")),
            strict=True,
        )
    }
    turns = _turn_readings(tables, judge)
    events = _done_events(tables)  # no event meta: nothing here needs it
    probes = events[(events["kind"] == "probe") & (events["name"] == MAIN_PROBE)]
    probes = probes[probes["role"] == HONEST]
    last = {str(c): int(r) for c, r in probes.groupby("conversation_id")["round"].max().items()}
    models = _models(tables)
    rows: list[tuple[Any, ...]] = []
    by_conversation = _turns_by_conversation(turns)
    for conversation in done.to_dict("records"):
        cid = str(conversation["conversation_id"])
        if cid not in last:
            continue
        meta = conversation["meta"]
        honest = [str(a["name"]) for a in meta.get("agents", []) if a.get("role") == HONEST]
        names = [str(a["name"]) for a in meta.get("agents", [])]
        heard = _neighbours(names, meta.get("topology"))
        spoken, before_turn, after_round = _seen_means(
            by_conversation.get(cid, []), heard, last[cid]
        )
        for agent in honest:
            model = models.get((cid, agent), "")
            initial = private.get((cid, agent, 0), np.nan)
            rows.append((cid, agent, model, 0, initial, initial, np.nan, np.nan))
            for t in range(1, last[cid] + 1):
                rows.append(
                    (
                        cid,
                        agent,
                        model,
                        t,
                        private.get((cid, agent, t), np.nan),
                        spoken.get((agent, t), np.nan),
                        after_round.get((agent, t), np.nan),
                        before_turn.get((agent, t), np.nan),
                    )
                )
    return pd.DataFrame(rows, columns=list(OPINION_COLUMNS))


def _turn_readings(tables: RunTables, judge: str) -> pd.DataFrame:
    """Every turn of finished conversations in speaking order, with its reading (NaN: none)."""
    events = _done_events(tables)
    turns = events[(events["kind"] == "message") & (events["name"] == "turn")]
    columns = ["conversation_id", "seq", "round", "turn", "agent", "role", "status"]
    turns = turns[columns].astype({"seq": "int64", "round": "int64", "turn": "int64"})
    labels = tables.labels_for(judge)
    labels = labels[labels["status"] == "ok"][["conversation_id", "event_seq", "label"]]
    labels = labels.rename(columns={"event_seq": "seq"}).astype({"seq": "int64"})
    labels = labels.drop_duplicates(["conversation_id", "seq"], keep="last")
    merged = turns.merge(labels, on=["conversation_id", "seq"], how="left")
    reading = np.where(merged["label"].isna(), np.nan, (merged["label"] == ENDORSE).astype(float))
    reading = np.where(merged["role"] == ADVERSARY, 1.0, reading)
    merged["reading"] = np.where(merged["status"] == "ok", reading, np.nan)
    merged["conversation_id"] = merged["conversation_id"].astype(str)
    merged["agent"] = merged["agent"].astype(str)
    return merged.sort_values(["conversation_id", "round", "turn"]).reset_index(drop=True)


def _neighbours(names: list[str], topology: Mapping[str, Any] | None) -> dict[str, set[str]]:
    """Whom each agent hears: its edges' other ends, or every other agent (complete)."""
    if not topology or not topology.get("edges"):
        if topology and topology.get("kind") not in (None, "complete"):
            return {name: set() for name in names}
        return {name: set(names) - {name} for name in names}
    heard: dict[str, set[str]] = {name: set() for name in names}
    for a, b in topology["edges"]:
        heard.setdefault(str(a), set()).add(str(b))
        heard.setdefault(str(b), set()).add(str(a))
    return heard


Means = dict[tuple[str, int], float]
Turn = tuple[int, str, str, float]
"""A turn as the means read it: (round, agent, status, reading), in speaking order."""


def _turns_by_conversation(turns: pd.DataFrame) -> dict[str, list[Turn]]:
    """Each conversation's turns as plain tuples, read from the columns once (the frame is
    sorted by conversation, round and turn), so the per-conversation work is pure Python."""
    grouped: dict[str, list[Turn]] = {}
    for cid, round_, agent, status, reading in zip(
        turns["conversation_id"].tolist(),
        turns["round"].tolist(),
        turns["agent"].tolist(),
        turns["status"].tolist(),
        turns["reading"].tolist(),
        strict=True,
    ):
        grouped.setdefault(cid, []).append((int(round_), agent, status, float(reading)))
    return grouped


def _seen_means(
    turns: list[Turn], heard: Mapping[str, set[str]], last: int
) -> tuple[Means, Means, Means]:
    """(agent, round) -> the reading of its own turn of the round, its neighbours' latest
    expressed mean before that turn, and at the end of the round."""
    latest: dict[str, float] = {}  # each agent's latest seen reading (NaN: seen, unread)
    total, count = 0.0, 0  # over every known latest reading: a room where all hear all
    everyone = set(heard)
    hears_all = {agent: heard[agent] | {agent} == everyone for agent in heard}
    spoken: dict[tuple[str, int], float] = {}
    before: dict[tuple[str, int], float] = {}
    after: dict[tuple[str, int], float] = {}

    def mean(agent: str) -> float:
        if hears_all.get(agent, False):  # hears everyone: the running sum less its own
            own = latest.get(agent, np.nan)
            mine = 0 if np.isnan(own) else 1
            n = count - mine
            return (total - (own if mine else 0.0)) / n if n else np.nan
        known = [latest[j] for j in heard.get(agent, ()) if not np.isnan(latest.get(j, np.nan))]
        return float(np.mean(known)) if known else np.nan

    def update(agent: str, reading: float) -> None:
        nonlocal total, count
        old = latest.get(agent, np.nan)
        if not np.isnan(old):
            total, count = total - old, count - 1
        if not np.isnan(reading):
            total, count = total + reading, count + 1
        latest[agent] = reading

    rounds: dict[int, list[Turn]] = {}
    for turn in turns:
        rounds.setdefault(turn[0], []).append(turn)
    for round_ in range(1, last + 1):
        for _, agent, status, reading in rounds.get(round_, ()):
            before[(agent, round_)] = mean(agent)
            spoken[(agent, round_)] = reading
            if status == "ok":
                update(agent, reading)
        for agent in heard:
            after[(agent, round_)] = mean(agent)
    return spoken, before, after


def _done_events(tables: RunTables) -> pd.DataFrame:
    return tables.core_events[tables.done_events()]


def _models(tables: RunTables) -> dict[tuple[str, str], str]:
    """(conversation, agent) -> the model of its probes (else of its turns)."""
    events = tables.core_events
    events = events[events["model"].notna() & events["kind"].isin(["probe", "message"])]
    ordered = events.sort_values("kind", ascending=False)  # probes first
    pairs = ordered.drop_duplicates(["conversation_id", "agent"], keep="first")
    return {
        (str(c), str(a)): str(m)
        for c, a, m in zip(
            *(pairs[c].tolist() for c in ("conversation_id", "agent", "model")), strict=True
        )
    }
