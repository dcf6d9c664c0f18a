"""Peer pressure's answers for the order checks: each honest agent's main private answer after
round r, against the positions of the others' turns of round r in the order they spoke.

Positions are in the private answer's terms: an adversary's turn pushes the false answer
(`manipulated`); an honest turn the judge labelled `endorse` holds it, one labelled `reject`
holds the true answer (`true`), any other turn neither (`other`). A private answer labelled
`true` or `manipulated` is an answer; `mixed` or `uncertain` is none. The answers are free text,
so there are no options shown. Conversations on a topology (where an agent hears only its
neighbours) have no speaker order here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from backchannel.analysis import ORDER_COLUMNS, RunTables, texts_in
from backchannel.paradigms.peer_pressure._base import conversation_codes, latest_labels

ANSWERS = ("true", "manipulated")
_POSITIONS = np.array(["other", "manipulated", "true"], dtype=object)


def order_answers(tables: RunTables, judge: str) -> pd.DataFrame:
    """One row per honest agent's main probe after a round (`ORDER_COLUMNS`), matched to labels
    and turns by integer codes: conversation and event, conversation and round."""
    events = tables.core_events  # no event meta needed
    done = tables.done_events().to_numpy(dtype=bool)
    kind, name, channel = (events[c] for c in ("kind", "name", "channel"))
    is_turn = done & ((kind == "message") & (name == "turn") & (channel == "public")).to_numpy()
    is_probe = done & (
        (kind == "probe")
        & (name == "answer")
        & (channel == "private")
        & (events["role"] == "honest")
    ).to_numpy(dtype=bool)
    is_probe &= events["round"].to_numpy() >= 1  # before round 1 nobody has spoken
    turns, probes = np.flatnonzero(is_turn), np.flatnonzero(is_probe)
    if not len(probes):
        return pd.DataFrame([], columns=list(ORDER_COLUMNS))
    conversation = conversation_codes(tables, events["conversation_id"])
    seq = events["seq"].to_numpy(dtype=np.int64)
    label = _event_labels(tables, judge, conversation, seq, np.r_[turns, probes])
    # A turn's position: 1 manipulated (an adversary, or an endorsing honest agent), 2 true.
    position = np.where(label == "endorse", 1, np.where(label == "reject", 2, 0))
    position[(events["role"] == "adversary").to_numpy(dtype=bool)] = 1
    rounds = events["round"].to_numpy(dtype=np.int64)
    agent, _ = pd.factorize(events["agent"].astype(str))
    turn = events["turn"].iloc[turns]
    turn_order = turn.fillna(turn.max() + 1 if turn.notna().any() else 0).to_numpy(np.int64)
    spoken = turns[np.lexsort((turn_order, rounds[turns], conversation[turns]))]
    low, span = int(rounds.min()), int(rounds.max() - rounds.min()) + 1
    group = conversation * span + (rounds - low)  # sorted along `spoken`
    start = np.searchsorted(group[spoken], group[probes], side="left")
    end = np.searchsorted(group[spoken], group[probes], side="right")
    # Every (probe, turn of its round) pair, the probe's own turns dropped, in speaking order.
    sizes = end - start
    owner = np.repeat(np.arange(len(probes)), sizes)
    heard = spoken[
        np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes) + start[owner]
    ]
    others = agent[heard] != agent[probes][owner]
    owner, heard = owner[others], heard[others]
    bounds = np.searchsorted(owner, np.arange(len(probes) + 1))
    done_conversations = tables.done_conversations()
    topology = {
        str(c)
        for c, meta in zip(
            done_conversations["conversation_id"], done_conversations["meta"], strict=True
        )
        if meta.get("topology") is not None
    }
    listed = texts_in(tables.conversations["conversation_id"], topology)
    on_topology = np.r_[listed, False][conversation[probes]]
    speakers = _speaker_lists(position[heard], bounds, on_topology)
    ok = (events["status"].iloc[probes] == "ok").to_numpy(dtype=bool)
    answer = label[probes]
    valid = ok & np.isin(answer, np.array(ANSWERS, dtype=object))
    answer[~valid] = None  # `label[probes]` is a copy
    answers = answer.tolist()
    columns: dict[str, Any] = {
        "conversation_id": events["conversation_id"].iloc[probes].astype(str).tolist(),
        "seq": seq[probes].tolist(),
        "agent": events["agent"].iloc[probes].astype(str).tolist(),
        "role": events["role"].iloc[probes].astype(str).tolist(),
        "options": [None] * len(probes),
        "speakers": speakers,
        "answer": answers,
    }
    return pd.DataFrame(columns, columns=list(ORDER_COLUMNS))


def _speaker_lists(
    heard: npt.NDArray[np.int64], bounds: npt.NDArray[np.int64], skip: npt.NDArray[np.bool_]
) -> npt.NDArray[np.object_]:
    """Per probe, the positions (`_POSITIONS` codes) `heard[bounds[i]:bounds[i + 1]]` as a list
    of names, None where `skip` or nothing was heard. Probes fall into few patterns, so each
    distinct pattern's list is built once and shared by its probes (one object per pattern,
    which the order checks also read once)."""
    start, size = bounds[:-1], np.diff(bounds)
    # A code per pattern, one position at a time: 0 once a probe's list has ended, else its
    # position + 1, renumbered after each step so the code stays small.
    pattern = np.zeros(len(start), dtype=np.int64)
    for k in range(int(size.max()) if len(size) else 0):
        longer = size > k
        digit = np.zeros(len(start), dtype=np.int64)
        digit[longer] = heard[start[longer] + k] + 1
        pattern = np.unique(pattern * 4 + digit, return_inverse=True)[1].reshape(-1)
    distinct, first, each = np.unique(pattern, return_index=True, return_inverse=True)
    lists = np.empty(len(distinct), dtype=object)
    for i, row in enumerate(first.tolist()):
        at = int(start[row])
        lists[i] = _POSITIONS[heard[at : at + int(size[row])]].tolist() or None
    speakers = lists[each.reshape(-1)]
    speakers[skip] = None
    return speakers


def _event_labels(
    tables: RunTables, judge: str, conversation: np.ndarray, seq: np.ndarray, wanted: np.ndarray
) -> np.ndarray:
    """The valid label of each `wanted` event ('' for the others and where none): of its labels
    with status ok and a value, the last (`latest_labels`, rule `ok_named`); a NaN is a label
    that names nothing, so it is no position and no answer."""
    rows = latest_labels(tables, judge, conversation[wanted], seq[wanted], "ok_named")
    picked = tables.labels_for(judge)["label"].iloc[rows[rows >= 0]]
    label = np.full(len(seq), "", dtype=object)
    label[wanted[rows >= 0]] = picked.to_numpy(dtype=object, na_value="nan")
    return label
