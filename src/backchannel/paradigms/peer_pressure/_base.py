"""Labelled views of a peer-pressure run that every metric starts from.

Private answers and public turns are joined with one judge's labels; events or labels that
failed are left out of these views and counted by `failure_counts` instead.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from backchannel.analysis import Design, RunTables

INFECTED = "manipulated"
KNOWER = "true"
MAIN_PROBE = "answer"
REASK_PROBES = ("reask_original", "reask_self", "reask_self_anonymous", "reask_group")

Ints = npt.NDArray[np.int64]
LabelRule = Literal["any", "ok", "ok_named"]
"""Which of an event's labels the latest is taken among: `any` label (its status and value are
judged after); those with status `ok` (`ok`: one without a value, None or NaN, is still the
latest and reads as none); those with status `ok` and a value other than None (`ok_named`: a
NaN is a label that names nothing)."""


def done_conversations(tables: RunTables) -> pd.DataFrame:
    """Finished conversations with their level of each of the run's declared factors (its
    `Design`, each level exactly as the cell declared it), item and replicate."""
    return tables.memo(("pp.done",), lambda: _done_conversations(tables)).copy()


def _done_conversations(tables: RunTables) -> pd.DataFrame:
    done = tables.done_conversations()
    design = Design.of(tables)
    frame = done[["conversation_id"]].copy()
    distinct = _distinct_rows(done, ["cell", *design.factors])
    if distinct is None or not done["conversation_id"].is_unique:
        levels = design.levels(done)
        ids = [str(cid) for cid in done["conversation_id"]]
        for factor in design.factors:  # object columns: a level 2 beside a null one stays 2
            found = [levels[c][factor] for c in ids]
            frame[factor] = pd.Series(found, index=done.index, dtype=object)
    else:  # the levels of each distinct cell and factor values, read once
        first, row = distinct
        shared = done.iloc[first].assign(conversation_id=[str(i) for i in range(len(first))])
        per_row = list(design.levels(shared).values())
        for factor in design.factors:  # object columns: a level 2 beside a null one stays 2
            values = np.empty(len(per_row), dtype=object)
            for i, levels in enumerate(per_row):
                values[i] = levels[factor]
            frame[factor] = pd.Series(values[row], index=done.index, dtype=object)
    frame["item_id"] = done["item_id"]
    frame["replicate"] = done["replicate"]
    return frame


def _distinct_rows(frame: pd.DataFrame, columns: list[str]) -> tuple[Ints, Ints] | None:
    """The first row of each distinct combination of `columns` (those `frame` has) and each
    row's combination, told apart exactly: text by its characters, integers and booleans by
    value, floats by their bits (-0.0 is not 0.0); None when a column holds other values."""
    key = np.zeros(len(frame), dtype=np.int64)
    for column in (c for c in columns if c in frame.columns):
        values = frame[column]
        if isinstance(values.dtype, pd.StringDtype):
            codes = pd.factorize(values)[0].astype(np.int64)  # missing: -1
        elif isinstance(values.dtype, pd.CategoricalDtype):
            codes = values.cat.codes.to_numpy().astype(np.int64)  # missing: -1
        elif not isinstance(values.dtype, np.dtype):  # another extension type
            return None
        elif values.dtype.kind in "iub":
            codes = pd.factorize(values.to_numpy())[0].astype(np.int64)
        elif values.dtype.kind == "f":
            bits = values.to_numpy(dtype=np.float64).view(np.int64)
            codes = pd.factorize(bits)[0].astype(np.int64)
        else:
            return None
        key = pd.factorize(key * (int(codes.max(initial=-1)) + 2) + codes + 1)[0].astype(np.int64)
    _, first, row = np.unique(key, return_index=True, return_inverse=True)
    return first.astype(np.int64), row.reshape(-1).astype(np.int64)


def text_codes(values: pd.Series | pd.Index, index: pd.Index | pd.Series) -> Ints:
    """Each value's position in `index`, matched as text (-1: not there; the first of equal
    texts): how peer pressure turns ids into integer keys for its joins."""
    found = pc.index_in(_texts(values), value_set=_texts(index)).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)


def _texts(values: pd.Series | pd.Index) -> pa.Array:
    texts = pa.array(values.astype(str))
    return texts if texts.type == pa.large_string() else texts.cast(pa.large_string())


def conversation_codes(tables: RunTables, values: pd.Series | pd.Index) -> Ints:
    """Each conversation id's position among the run's conversations (-1: none of them)."""
    ids = tables.memo(("pp.conversation_ids",), lambda: tables.conversations["conversation_id"])
    return text_codes(values, ids)


def latest_labels(
    tables: RunTables, judge: str, conversation: Ints, seq: Ints, rule: LabelRule
) -> Ints:
    """Per event (its conversation code, `conversation_codes`, and seq), the row in
    `tables.labels_for(judge)` of its latest label under `rule` (-1: none)."""
    keys, rows, low, span = tables.memo(
        ("pp.label_keys", judge, rule), lambda: _label_keys(tables, judge, rule)
    )
    if not len(keys):
        return np.full(len(seq), -1, dtype=np.int64)
    seq = np.asarray(seq, dtype=np.int64)
    wanted = np.asarray(conversation, dtype=np.int64) * span + (seq - low)
    j = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    found = (conversation >= 0) & (seq >= low) & (seq < low + span) & (keys[j] == wanted)
    return np.where(found, rows[j], -1)


def _label_keys(tables: RunTables, judge: str, rule: LabelRule) -> tuple[Ints, Ints, int, int]:
    """The judge's labels under `rule` as sorted unique integer keys (conversation code, then
    seq, less `low`, within `span`), with the row of each key's last label."""
    labels = tables.labels_for(judge)
    keep = conversation_codes(tables, labels["conversation_id"])
    seq = labels["event_seq"].to_numpy(dtype=np.int64)
    chosen = keep >= 0
    if rule != "any":
        chosen &= (labels["status"] == "ok").to_numpy(dtype=bool)
    if rule == "ok_named":
        missing = np.flatnonzero(chosen & labels["label"].isna().to_numpy(dtype=bool))
        values = labels["label"].iloc[missing].tolist()
        chosen[missing[np.array([v is None for v in values], dtype=bool)]] = False
    rows = np.flatnonzero(chosen)
    if not len(rows):
        return np.zeros(0, dtype=np.int64), rows.astype(np.int64), 0, 1
    low = int(seq[rows].min())
    span = int(seq[rows].max()) - low + 1
    keys = keep[rows] * span + (seq[rows] - low)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    last = np.r_[ordered[1:] != ordered[:-1], True]
    return ordered[last], rows[order[last]].astype(np.int64), low, span


_JOIN_KEY = "__pp_join_key__"


def join_keys(left: pd.DataFrame, right: pd.DataFrame, on: list[str]) -> tuple[Ints, Ints]:
    """One integer per row of each frame, equal exactly where the rows' `on` values are equal
    (a missing value equal to a missing one, as `merge` matches them): each column is coded
    over both frames at once, and the codes are combined column by column."""
    n = len(left)
    key = np.zeros(n + len(right), dtype=np.int64)
    size = 1  # the key's values lie in 0..size-1
    for column in on:
        both = pd.concat([left[column], right[column]], ignore_index=True)
        codes, uniques = pd.factorize(both)
        width = len(uniques) + 1  # a missing value is a code of its own, the last
        codes = np.where(codes < 0, width - 1, codes).astype(np.int64)
        if size * width >= 2**62:  # keep the key an exact int64: renumber it first
            key, kept = pd.factorize(key)
            key, size = key.astype(np.int64), len(kept)
        key, size = key * width + codes, size * width
    return key[:n], key[n:]


def merge_coded(
    left: pd.DataFrame, right: pd.DataFrame, on: list[str], how: Literal["inner", "left"]
) -> pd.DataFrame:
    """`left.merge(right, on=on, how=how)`, same rows, order and columns, joined on one
    integer key (`join_keys`) instead of the text columns."""
    left_key, right_key = join_keys(left, right, on)
    coded_left = left.assign(**{_JOIN_KEY: left_key})
    coded_right = right.drop(columns=on).assign(**{_JOIN_KEY: right_key})
    merged = coded_left.merge(coded_right, on=_JOIN_KEY, how=how)
    return merged.drop(columns=_JOIN_KEY)


def _labelled(tables: RunTables, judge: str, events: pd.DataFrame) -> pd.DataFrame:
    """`events` (a fresh index) with the judge's latest label and its status (`label`,
    `label_status`; missing without one) and a `valid` flag (event ok and label ok)."""
    labels = tables.labels_for(judge)
    merged = events.astype({"seq": "int64"}).reset_index(drop=True)
    codes = conversation_codes(tables, merged["conversation_id"])
    rows = latest_labels(tables, judge, codes, merged["seq"].to_numpy(), "any")
    merged["label"] = labels["label"].array.take(rows, allow_fill=True)
    merged["label_status"] = labels["status"].array.take(rows, allow_fill=True)
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
    position = (turns["round"] * 100_000 + turns["turn"]).to_numpy(dtype=np.int64)
    adversary = ((turns["role"] == "adversary") & (turns["status"] == "ok")).to_numpy(bool)
    is_honest = (turns["role"] == "honest").to_numpy(dtype=bool)
    honest = turns[is_honest].copy()
    codes = conversation_codes(tables, turns["conversation_id"])
    if (codes < 0).any():  # an id outside the run's conversations: group by the value itself
        codes = pd.factorize(turns["conversation_id"])[0].astype(np.int64)  # missing: -1
    known = codes >= 0
    # Each conversation's first ok adversary turn by code (+inf: none, and the last slot, which
    # code -1 reads), which exposes the honest turns after it.
    first_adversary = np.full(int(codes.max()) + 2 if len(codes) else 1, np.inf)
    chosen = adversary & known
    np.minimum.at(first_adversary, codes[chosen], position[chosen].astype(float))
    exposed = position[is_honest] > first_adversary[codes[is_honest]]
    honest["exposed"] = pd.Series(exposed, index=honest.index, dtype=bool)
    conversation = np.where(known, codes, np.nan)[is_honest]  # a missing id is in no round
    by_round = honest.groupby([conversation, honest["round"].to_numpy()])["turn"]
    honest["first_speaker"] = honest["turn"] == by_round.transform("min")
    honest["last_speaker"] = honest["turn"] == by_round.transform("max")
    return speaking_turns(tables, judge, honest)


def speaking_turns(tables: RunTables, judge: str, honest: pd.DataFrame) -> pd.DataFrame:
    """The honest turns with a valid stance of `judge` as `s`, with their exposure and
    speaking-order flags: the columns `_public_turns` gives."""
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
