"""Labelled views of a peer-pressure run that every metric starts from.

Private answers and public turns are joined with one judge's labels; events or labels that
failed are left out of these views and counted by `failure_counts` instead.
"""

from __future__ import annotations

import pandas as pd

from backchannel.analysis import Design, RunTables

INFECTED = "manipulated"
KNOWER = "true"
MAIN_PROBE = "answer"
REASK_PROBES = ("reask_original", "reask_self", "reask_self_anonymous", "reask_group")

_KEY = ["conversation_id", "seq"]


def done_conversations(tables: RunTables) -> pd.DataFrame:
    """Finished conversations with their level of each of the run's declared factors (its
    `Design`, each level exactly as the cell declared it), item and replicate."""
    return tables.memo(("pp.done",), lambda: _done_conversations(tables)).copy()


def _done_conversations(tables: RunTables) -> pd.DataFrame:
    done = tables.done_conversations()
    design = Design.of(tables)
    levels = design.levels(done)
    frame = done[["conversation_id"]].copy()
    ids = [str(cid) for cid in done["conversation_id"]]
    for factor in design.factors:  # object columns: a level 2 beside a null one stays 2
        frame[factor] = pd.Series([levels[c][factor] for c in ids], index=done.index, dtype=object)
    frame["item_id"] = done["item_id"]
    frame["replicate"] = done["replicate"]
    return frame


def _judge_labels(tables: RunTables, judge: str) -> pd.DataFrame:
    return tables.memo(("pp.labels", judge), lambda: _read_labels(tables, judge))


def _read_labels(tables: RunTables, judge: str) -> pd.DataFrame:
    labels = tables.labels_for(judge)[["conversation_id", "event_seq", "label", "status"]]
    labels = labels.rename(columns={"event_seq": "seq", "status": "label_status"})
    labels = labels.astype({"seq": "int64"})
    return labels.drop_duplicates(_KEY, keep="last")


def _labelled(tables: RunTables, judge: str, events: pd.DataFrame) -> pd.DataFrame:
    """`events` with the judge's label and a `valid` flag (event ok and label ok)."""
    events = events.astype({"seq": "int64"})
    merged = events.merge(_judge_labels(tables, judge), on=_KEY, how="left")
    merged["valid"] = (
        (merged["status"] == "ok") & (merged["label_status"] == "ok") & merged["label"].notna()
    )
    return merged


def _done_events(tables: RunTables) -> pd.DataFrame:
    return tables.done_core_events()


def _probe_events(tables: RunTables, names: tuple[str, ...]) -> pd.DataFrame:
    return tables.memo(("pp.probes", names), lambda: _select_probes(tables, names))


def _select_probes(tables: RunTables, names: tuple[str, ...]) -> pd.DataFrame:
    events = _done_events(tables)
    mask = (
        (events["kind"] == "probe")
        & (events["channel"] == "private")
        & events["name"].isin(names)
        & (events["role"] == "honest")
    )
    return events.loc[mask, ["conversation_id", "seq", "name", "round", "agent", "status"]]


def _turn_events(tables: RunTables) -> pd.DataFrame:
    return tables.memo(("pp.turns",), lambda: _select_turns(tables))


def _select_turns(tables: RunTables) -> pd.DataFrame:
    events = _done_events(tables)
    mask = (events["kind"] == "message") & (events["name"] == "turn")
    columns = ["conversation_id", "seq", "round", "turn", "agent", "role", "status"]
    return events.loc[mask, columns]


def private_answers(
    tables: RunTables, judge: str, names: tuple[str, ...] = (MAIN_PROBE,)
) -> pd.DataFrame:
    """Valid labelled probes of honest agents: conversation_id, agent, checkpoint, name, p."""
    key = ("pp.private_answers", judge, names)
    return tables.memo(key, lambda: _private_answers(tables, judge, names)).copy()


def _private_answers(tables: RunTables, judge: str, names: tuple[str, ...]) -> pd.DataFrame:
    labelled = _labelled(tables, judge, _probe_events(tables, names))
    valid = labelled[labelled["valid"]]
    frame = pd.DataFrame(
        {
            "conversation_id": valid["conversation_id"],
            "agent": valid["agent"],
            "checkpoint": valid["round"].astype("int64"),
            "name": valid["name"],
            "p": valid["label"].astype(str),
        }
    )
    return frame.drop_duplicates(["conversation_id", "agent", "checkpoint", "name"], keep="last")


def last_checkpoints(tables: RunTables) -> pd.Series:
    """Per conversation, the last checkpoint at which answer probes were asked (any status)."""
    return tables.memo(("pp.last_checkpoints",), lambda: _last_checkpoints(tables)).copy()


def _last_checkpoints(tables: RunTables) -> pd.Series:
    probes = _probe_events(tables, (MAIN_PROBE,))
    return probes.groupby("conversation_id")["round"].max().astype("int64")


def public_turns(tables: RunTables, judge: str) -> pd.DataFrame:
    """Valid labelled turns of honest agents, with exposure and first/last-speaker flags.

    Columns: conversation_id, round, turn, agent, s, exposed, first_speaker, last_speaker.
    A turn is exposed when an adversary message (status ok) comes before it: in an earlier
    round, or earlier in the same round. First and last speakers are taken among all honest
    turns of the round, so a failed turn still holds its place.
    """
    return tables.memo(("pp.public_turns", judge), lambda: _public_turns(tables, judge)).copy()


def _public_turns(tables: RunTables, judge: str) -> pd.DataFrame:
    turns = _turn_events(tables).astype({"round": "int64", "turn": "int64"})
    position = turns["round"] * 100_000 + turns["turn"]
    adversary = (turns["role"] == "adversary") & (turns["status"] == "ok")
    first_adversary = position[adversary].groupby(turns.loc[adversary, "conversation_id"]).min()
    honest = turns[turns["role"] == "honest"].copy()
    honest_position = position[turns["role"] == "honest"]
    threshold = honest["conversation_id"].map(first_adversary).astype(float)
    honest["exposed"] = (honest_position > threshold).fillna(False).astype(bool)
    by_round = honest.groupby(["conversation_id", "round"])["turn"]
    honest["first_speaker"] = honest["turn"] == by_round.transform("min")
    honest["last_speaker"] = honest["turn"] == by_round.transform("max")
    labelled = _labelled(tables, judge, honest)
    valid = labelled[labelled["valid"]].rename(columns={"label": "s"})
    valid = valid.astype({"s": str})
    columns = [
        "conversation_id",
        "round",
        "turn",
        "agent",
        "s",
        "exposed",
        "first_speaker",
        "last_speaker",
    ]
    return valid[columns].reset_index(drop=True)


def failure_counts(tables: RunTables, judge: str) -> dict[str, int]:
    """Failed conversations, events and labels: counted here, left out of every rate."""
    failed_conversations = int((tables.conversations["status"] != "done").sum())
    counts: dict[str, int] = {"conversations_failed": failed_conversations}
    answers = _labelled(tables, judge, _probe_events(tables, (MAIN_PROBE,)))
    reasks = _labelled(tables, judge, _probe_events(tables, REASK_PROBES))
    turns = _turn_events(tables)
    honest = _labelled(tables, judge, turns[turns["role"] == "honest"])
    for name, frame in (("answer_probes", answers), ("reask_probes", reasks), ("turns", honest)):
        event_failed = frame["status"] != "ok"
        counts[f"{name}_failed"] = int(event_failed.sum())
        counts[f"{name}_unlabelled"] = int((~event_failed & ~frame["valid"]).sum())
    counts["adversary_turns_failed"] = int(
        ((turns["role"] == "adversary") & (turns["status"] != "ok")).sum()
    )
    return counts
