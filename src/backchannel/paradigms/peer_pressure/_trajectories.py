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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from backchannel.analysis import OPINION_COLUMNS, RunTables
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    MAIN_PROBE,
    conversation_codes,
    latest_labels,
    private_answers,
    text_codes,
)

ENDORSE = "endorse"
ADVERSARY, HONEST = "adversary", "honest"

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]


def opinion_trajectories(tables: RunTables, judge: str) -> pd.DataFrame:
    """One row per (finished conversation, honest agent, checkpoint 0..T): `OPINION_COLUMNS`.

    In a complete room every agent hears everyone, so its means come from running counts over
    all conversations at once (`_RoomMeans`); only a room on a topology where some honest agent
    hears part of the room is replayed turn by turn (`_seen_means`). Conversations and agents
    are matched as integer codes (`_Grid.key`), never as texts row by row."""
    events = tables.done_core_events()  # no event meta: nothing here needs it
    rooms = _rooms(tables.done_conversations(), _last_rounds(events))
    if not any(rooms.agents):
        return pd.DataFrame([], columns=list(OPINION_COLUMNS))
    conversations = pd.Index(rooms.unique_cids, dtype=object)
    turns = _turn_readings(events, tables, judge, conversations, rooms)
    speakers, spoken_by = pd.factorize(turns.agent)
    vocabulary = pd.Index(np.asarray(spoken_by, dtype=object))  # then silent honest agents
    silent = pd.Index([a for agents in rooms.agents for a in agents], dtype=object).unique()
    vocabulary = vocabulary.append(silent[vocabulary.get_indexer(silent) < 0])
    grid = _Grid.of(rooms, conversations, vocabulary)
    means = _RoomMeans(turns, speakers.astype(np.int64), grid.n_agents, grid.n_rounds)
    spoken, before, after = means.at(grid.c, grid.a, grid.t)
    for i, heard in rooms.partial.items():
        _replay(i, heard, rooms, turns, grid, (spoken, before, after))
    private = _private(tables, judge, conversations, vocabulary, grid)
    first = grid.t == 0
    spoken[first] = private[first]
    return pd.DataFrame(
        {
            "conversation_id": pd.array(rooms.cids, dtype="str").take(grid.room),
            "agent": pd.array(list(vocabulary), dtype="str").take(grid.a),
            "model": _models(tables, conversations, vocabulary, grid),
            "round": grid.t,
            "private": private,
            "public": spoken,
            "neighbours_private": after,
            "neighbours_public": before,
        }
    )


@dataclass
class _Rooms:
    """The finished conversations with main probes, in stored order, and their honest agents."""

    cids: list[str] = field(default_factory=list)
    agents: list[list[str]] = field(default_factory=list)
    last_of: dict[str, int] = field(default_factory=dict)
    partial: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    """Room index -> whom each agent hears, where an honest agent hears part of the room."""

    @property
    def unique_cids(self) -> list[str]:
        return list(dict.fromkeys(self.cids))


def _last_rounds(events: pd.DataFrame) -> dict[str, int]:
    """Per conversation, the last round at which honest agents took the main probe."""
    mask = (events["kind"] == "probe") & (events["name"] == MAIN_PROBE) & (events["role"] == HONEST)
    probes = events[["conversation_id", "round"]][mask]
    last = probes.groupby("conversation_id")["round"].max()
    return {str(c): int(r) for c, r in zip(last.index.tolist(), last.tolist(), strict=True)}


def _rooms(done: pd.DataFrame, last: Mapping[str, int]) -> _Rooms:
    """The rooms that took the main probe, and which of them an honest agent hears in part."""
    rooms = _Rooms(last_of=dict(last))
    roster: dict[int, tuple[list[Any], list[str]]] = {}  # by the agents list, shared by rooms
    for cid_, meta in zip(done["conversation_id"].tolist(), done["meta"].tolist(), strict=True):
        cid = str(cid_)
        if cid not in last:
            continue
        agents = meta.get("agents", [])
        if id(agents) not in roster:  # the list is kept with it, so its id stays its own
            roster[id(agents)] = (
                agents,
                [str(a["name"]) for a in agents if a.get("role") == HONEST],
            )
        honest = roster[id(agents)][1]
        topology = meta.get("topology")
        if topology:  # a complete room (no topology) needs no neighbours: all hear all
            heard = _neighbours([str(a["name"]) for a in agents], topology)
            everyone = set(heard)
            if any(heard[agent] | {agent} != everyone for agent in honest):
                rooms.partial[len(rooms.cids)] = heard
        rooms.cids.append(cid)
        rooms.agents.append(honest)
    return rooms


@dataclass
class _Turns:
    """Turns of the rooms within their rounds 1..T, in speaking order, room by room."""

    c: Ints
    round_: Ints
    agent: pd.Series
    ok: Flags
    reading: Floats
    status: pd.Series


def _turn_readings(
    events: pd.DataFrame, tables: RunTables, judge: str, conversations: pd.Index, rooms: _Rooms
) -> _Turns:
    """Every turn of the rooms' rounds 1..T in speaking order (round, then turn; stored order
    among ties), with its reading (NaN: none)."""
    columns = ["conversation_id", "seq", "round", "turn", "agent", "role", "status"]
    turns = events[columns][(events["kind"] == "message") & (events["name"] == "turn")]
    turns = turns.astype({"seq": "int64", "round": "int64", "turn": "int64"})
    c = text_codes(turns["conversation_id"], conversations)
    round_ = turns["round"].to_numpy(dtype=np.int64)
    last = np.array([rooms.last_of[cid] for cid in conversations], dtype=np.int64)
    kept = (c >= 0) & (round_ >= 1) & (round_ <= last[np.maximum(c, 0)])
    turns, c, round_ = turns[kept], c[kept], round_[kept]
    order = np.lexsort((turns["turn"].to_numpy(dtype=np.int64), round_, c))
    turns, c, round_ = turns.iloc[order], c[order], round_[order]
    seq = turns["seq"].to_numpy(dtype=np.int64)

    # Each turn's latest ok label of the judge; one without a value is no reading.
    run_codes = conversation_codes(tables, conversations)
    rows = latest_labels(tables, judge, run_codes[c], seq, "ok")
    label = tables.labels_for(judge)["label"].iloc[rows[rows >= 0]]
    reading = np.full(len(seq), np.nan)  # no ok label of the judge: no reading
    read = np.flatnonzero(rows >= 0)[label.notna().to_numpy(dtype=bool)]
    reading[read] = (label.dropna() == ENDORSE).to_numpy(dtype=np.float64)
    reading = np.where((turns["role"] == ADVERSARY).to_numpy(dtype=bool), 1.0, reading)
    ok = (turns["status"] == "ok").to_numpy(dtype=bool)
    return _Turns(
        c=c,
        round_=round_,
        agent=turns["agent"].astype(str).reset_index(drop=True),
        ok=ok,
        reading=np.where(ok, reading, np.nan),
        status=turns["status"].reset_index(drop=True),
    )


@dataclass
class _Grid:
    """The output rows, room by room, agent by agent, checkpoint t 0..T: each row's room, and
    its conversation (c) and agent (a) as codes, with where each room's rows start."""

    room: Ints
    c: Ints
    a: Ints
    t: Ints
    starts: Ints
    n_agents: int
    n_rounds: int

    @classmethod
    def of(cls, rooms: _Rooms, conversations: pd.Index, vocabulary: pd.Index) -> _Grid:
        per_agent = np.array([rooms.last_of[c] + 1 for c in rooms.cids], dtype=np.int64)
        counts = np.array([len(a) for a in rooms.agents], dtype=np.int64)
        lengths = np.repeat(per_agent, counts)  # rows per (room, agent)
        block_starts = np.cumsum(lengths) - lengths
        t = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(block_starts, lengths)
        room = np.repeat(np.repeat(np.arange(len(rooms.cids), dtype=np.int64), counts), lengths)
        flat = [a for agents in rooms.agents for a in agents]
        codes = vocabulary.get_indexer(pd.Index(flat, dtype=object)).astype(np.int64)
        c = conversations.get_indexer(pd.Index(rooms.cids, dtype=object)).astype(np.int64)
        room_rows = counts * per_agent
        return cls(
            room=room,
            c=c[room],
            a=np.repeat(codes, lengths),
            t=t,
            starts=np.cumsum(room_rows) - room_rows,
            n_agents=len(vocabulary),
            n_rounds=int(per_agent.max()),
        )

    def key(self, c: Ints, a: Ints, t: Ints) -> Ints:
        """One sortable number per (conversation, agent, round)."""
        return (c * self.n_agents + a) * self.n_rounds + t


class _RoomMeans:
    """Means of agents who hear everyone, from running counts in speaking order.

    An agent's latest seen reading is that of its latest ok turn (0 or 1, or none); a room's
    known sum and count run over every speaker's latest reading, and an agent's mean leaves its
    own out. Readings are 0 or 1, so sums and counts are exact integers and each mean is the
    one division `_seen_means` makes."""

    def __init__(self, turns: _Turns, a: Ints, n_agents: int, n_rounds: int) -> None:
        c, n = turns.c, len(turns.c)
        known = turns.ok & ~np.isnan(turns.reading)
        counted = known.astype(np.int64)
        summed = np.where(known, turns.reading, 0.0).astype(np.int64)
        self.n_agents, self.n_rounds = n_agents, n_rounds
        speaker = c * n_agents + a
        by_agent = np.argsort(speaker, kind="stable")  # each speaker's turns in speaking order
        self.speaker = speaker[by_agent]
        positions = np.arange(n, dtype=np.int64)
        new = np.r_[True, self.speaker[1:] != self.speaker[:-1]] if n else positions > 0
        group_start = np.maximum.accumulate(np.where(new, positions, 0)) if n else positions
        ok = np.where(turns.ok[by_agent], positions, -1)
        latest = np.maximum.accumulate(ok) if n else ok
        mine = latest >= group_start  # the speaker's latest ok turn so far, if any
        safe = np.where(mine, latest, 0)
        self.own_count = np.where(mine, counted[by_agent][safe], 0)
        self.own_sum = np.where(mine, summed[by_agent][safe], 0)
        prior = positions > group_start  # its state before this turn: after its previous one
        prior_count = np.where(prior, np.r_[0, self.own_count[:-1]][:n], 0)
        prior_sum = np.where(prior, np.r_[0, self.own_sum[:-1]][:n], 0)
        # Each turn's change to the room's sum and count, in speaking order.
        d_count = np.empty(n, dtype=np.int64)
        d_sum = np.empty(n, dtype=np.int64)
        d_count[by_agent] = self.own_count - prior_count
        d_sum[by_agent] = self.own_sum - prior_sum
        self.room_count, self.room_sum = _running(d_count, c), _running(d_sum, c)
        before = _mean(
            (self.room_sum - d_sum)[by_agent] - prior_sum,
            (self.room_count - d_count)[by_agent] - prior_count,
        )
        self.c = c
        self.round_key = c * n_rounds + turns.round_  # sorted: speaking order
        self.agent_key = self.speaker * n_rounds + turns.round_[by_agent]  # sorted
        self.reading, self.before = turns.reading[by_agent], before

    def at(self, c: Ints, a: Ints, t: Ints) -> tuple[Floats, Floats, Floats]:
        """Per (conversation, agent, round): the reading of the agent's last turn of the round,
        its mean before that turn, and its mean at the end of the round (NaN: none)."""
        if not len(self.c):  # no turns: nothing said, nothing seen
            return np.full(len(c), np.nan), np.full(len(c), np.nan), np.full(len(c), np.nan)
        speaker = c * self.n_agents + a
        key = speaker * self.n_rounds + t
        j = np.searchsorted(self.agent_key, key, side="right") - 1  # its last turn so far
        safe = np.maximum(j, 0)
        seen = (j >= 0) & (self.speaker[safe] == speaker)
        spoke = seen & (self.agent_key[safe] == key)
        spoken = np.where(spoke, self.reading[safe], np.nan)
        before = np.where(spoke, self.before[safe], np.nan)
        own_count = np.where(seen, self.own_count[safe], 0)
        own_sum = np.where(seen, self.own_sum[safe], 0)
        k = np.searchsorted(self.round_key, c * self.n_rounds + t, side="right") - 1
        k_safe = np.maximum(k, 0)
        room = (k >= 0) & (self.c[k_safe] == c)  # the room's last turn by the round's end
        room_count = np.where(room, self.room_count[k_safe], 0)
        room_sum = np.where(room, self.room_sum[k_safe], 0)
        return spoken, before, _mean(room_sum - own_sum, room_count - own_count)


def _running(delta: Ints, c: Ints) -> Ints:
    """A cumulative sum of `delta` restarted at each conversation (rows grouped by `c`)."""
    total = np.cumsum(delta)
    if not len(c):
        return total
    new = np.r_[True, c[1:] != c[:-1]]
    first = np.maximum.accumulate(np.where(new, np.arange(len(c)), 0))
    return total - (total - delta)[first]


def _mean(total: Ints, count: Ints) -> Floats:
    """total / count, NaN where nothing is known."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, total.astype(np.float64) / count, np.nan)


def _replay(
    i: int,
    heard: Mapping[str, set[str]],
    rooms: _Rooms,
    turns: _Turns,
    grid: _Grid,
    out: tuple[Floats, Floats, Floats],
) -> None:
    """Room i's means turn by turn (some honest agent hears part of the room), written into
    its rows of the grid (spoken, before the turn, end of the round)."""
    last = rooms.last_of[rooms.cids[i]]
    if not rooms.agents[i]:
        return
    c = int(grid.c[grid.starts[i]])
    lo, hi = np.searchsorted(turns.c, c), np.searchsorted(turns.c, c, side="right")
    replayed = [
        (int(r), str(a), s, float(x))
        for r, a, s, x in zip(
            turns.round_[lo:hi].tolist(),
            turns.agent[lo:hi].tolist(),
            turns.status[lo:hi].tolist(),
            turns.reading[lo:hi].tolist(),
            strict=True,
        )
    ]
    means = _seen_means(replayed, heard, last)
    row = int(grid.starts[i])
    for agent in rooms.agents[i]:
        row += 1  # checkpoint 0 is the private answer
        for t in range(1, last + 1):
            for values, of in zip(out, means, strict=True):
                values[row] = of.get((agent, t), np.nan)
            row += 1


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


def _lookup(keys: Ints, wanted: Ints) -> tuple[Ints, Flags]:
    """Positions in sorted unique `keys` of each wanted key, and whether it is there."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=np.int64), np.zeros(len(wanted), dtype=bool)
    j = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return j, keys[j] == wanted


def _last_per_key(keys: Ints) -> tuple[Ints, Ints]:
    """Sorted unique keys and, for each, the position of its last occurrence in `keys`."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    last = np.r_[ordered[1:] != ordered[:-1], True] if len(keys) else np.zeros(0, dtype=bool)
    return ordered[last], order[last]


def _private(
    tables: RunTables, judge: str, conversations: pd.Index, vocabulary: pd.Index, grid: _Grid
) -> Floats:
    """Per grid row, 1 if the agent's main probe at the checkpoint gave the false answer, 0 if
    another valid one, NaN without one (of several, the last stored counts)."""
    answers = private_answers(tables, judge, (MAIN_PROBE,))
    c = text_codes(answers["conversation_id"], conversations)
    a = text_codes(answers["agent"], vocabulary)
    t = answers["checkpoint"].to_numpy(dtype=np.int64)
    p = (answers["p"] == INFECTED).to_numpy(dtype=np.float64)
    wanted = (c >= 0) & (a >= 0) & (t >= 0) & (t < grid.n_rounds)
    keys, positions = _last_per_key(grid.key(c[wanted], a[wanted], t[wanted]))
    j, found = _lookup(keys, grid.key(grid.c, grid.a, grid.t))
    if not len(keys):
        return np.full(len(grid.t), np.nan)
    return np.where(found, p[wanted][positions][j], np.nan)


def _models(tables: RunTables, conversations: pd.Index, vocabulary: pd.Index, grid: _Grid) -> Any:
    """Per grid row, the model of the agent's probes (else of its turns; "" without either).

    An agent's probes (or turns) name one model in practice; if some named several, which one
    counts is up to the sort in `_sorted_models`, so that is asked then."""
    columns = ["conversation_id", "agent", "kind", "model"]
    events = tables.core_events[columns]
    events = events[events["model"].notna() & events["kind"].isin(["probe", "message"])]
    c = text_codes(events["conversation_id"], conversations)
    a = text_codes(events["agent"], vocabulary)
    mine = (c >= 0) & (a >= 0)
    model, named = pd.factorize(events["model"].astype(str))
    probe = (events["kind"] == "probe").to_numpy(dtype=bool)[mine]
    pair = grid.key(c[mine], a[mine], np.zeros(int(mine.sum()), dtype=np.int64))
    order = np.lexsort((~probe, pair))  # pair by pair, probes first, in stored order
    pair, model, probe = pair[order], model[mine][order].astype(np.int64), probe[order]
    picked = np.full(len(grid.t), "", dtype=object)
    if len(pair):
        new = np.r_[True, pair[1:] != pair[:-1]]
        group, first = np.cumsum(new) - 1, np.flatnonzero(new)
        chosen = model[first]
        rival = (probe == probe[first][group]) & (model != chosen[group])
        if bool(rival.any()):
            return _sorted_models(tables, conversations, vocabulary, grid)
        j, found = _lookup(pair[first], grid.key(grid.c, grid.a, np.zeros_like(grid.t)))
        picked = np.where(found, np.asarray(named, dtype=object)[chosen][j], "")
    return pd.array(picked, dtype="str")


def _sorted_models(
    tables: RunTables, conversations: pd.Index, vocabulary: pd.Index, grid: _Grid
) -> Any:
    """`_models` where some agent's probes (or turns) name several models: the first after
    sorting the events probes first."""
    events = tables.core_events[["conversation_id", "agent", "kind", "model"]]
    events = events[events["model"].notna() & events["kind"].isin(["probe", "message"])]
    ordered = events.sort_values("kind", ascending=False)  # probes first
    pairs = ordered.drop_duplicates(["conversation_id", "agent"], keep="first")
    models = {
        (str(c), str(a)): str(m)
        for c, a, m in zip(
            *(pairs[c].tolist() for c in ("conversation_id", "agent", "model")), strict=True
        )
    }
    cids = np.asarray(conversations, dtype=object)[grid.c]
    agents = np.asarray(vocabulary, dtype=object)[grid.a]
    picked = [models.get((c, a), "") for c, a in zip(cids, agents, strict=True)]
    return pd.array(picked, dtype="str")
