"""Metrics of who heard whom, of mixed-model rooms and of interventions.

Exposure through the graph, infection by graph distance from the nearest adversary, final
infection split by the honest agent's model and the adversaries' model, and FPI, hidden
infection and time course per intervention. Each reads the group stored with the conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.engine import distances
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    conversation_codes,
    done_conversations,
    last_checkpoints,
    private_answers,
    public_turns,
    text_codes,
)
from backchannel.paradigms.peer_pressure._cells import Cells, model_factors, per_cell_rows
from backchannel.paradigms.peer_pressure._infection import final_private_infection
from backchannel.paradigms.peer_pressure._pairing import paired_turns, seven_way


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        loaded = json.loads(value)
        return loaded if isinstance(loaded, dict) else {}
    return {}


def groups(tables: RunTables) -> dict[str, dict[str, Any]]:
    """Per finished conversation: names, adversaries, edges (None: complete), memory window,
    each agent's model and the intervention."""
    return tables.memo(("pp.groups",), lambda: _groups(tables))


def _groups(tables: RunTables) -> dict[str, dict[str, Any]]:
    resolved = tables.manifest.get("config_resolved", {}).get("settings", {}) or {}
    done = tables.done_conversations()
    found: dict[str, dict[str, Any]] = {}
    by_cell: dict[str, tuple[Any, str]] = {}  # cell text -> (memory window, default model)
    columns = (done[c].tolist() for c in ("conversation_id", "meta", "cell"))
    for cid, meta, cell_text in zip(*columns, strict=True):
        meta = _as_dict(meta)
        if isinstance(cell_text, str) and cell_text in by_cell:
            memory, default_model = by_cell[cell_text]
        else:
            cell = _as_dict(cell_text)
            settings = {**resolved, **cell}
            memory = settings.get("memory_rounds")
            default_model = str(cell.get("model", settings.get("model", "")))
            if isinstance(cell_text, str):  # each distinct cell is decoded once
                by_cell[cell_text] = (memory, default_model)
        names = [a["name"] for a in meta.get("agents", [])]
        topology = meta.get("topology")
        found[str(cid)] = {
            "names": names,
            "adversaries": list(meta.get("adversaries", [])),
            "edges": None if topology is None else topology["edges"],
            "memory": memory,
            "models": meta.get("models") or {name: default_model for name in names},
            "intervention": (meta.get("intervention") or {}).get("kind", "none"),
        }
    return found


def _heard_pairs(names: list[Any], edges: list[Any] | None) -> list[tuple[Any, Any]]:
    """(agent, speaker it hears) in a room: every other agent (complete), else each edge both
    ways."""
    if edges is None:
        return [(a, b) for a in names for b in names if a != b]
    return [pair for a, b in edges for pair in ((a, b), (b, a))]


def graph_exposure(tables: RunTables, judge: str) -> pd.DataFrame:
    """Honest turns with `graph_exposed`: an ok adversary turn that the speaker hears came
    before it and lies within its memory window (rounds r-H..r).

    Turns meet the adversary turns of their conversation by integer conversation codes, and
    who hears whom is worked out once per distinct room (its names and edges)."""
    turns = public_turns(tables, judge)
    events = tables.core_events
    adversary = events.loc[
        (events["kind"] == "message")
        & (events["name"] == "turn")
        & (events["role"] == "adversary")
        & (events["status"] == "ok"),
        ["conversation_id", "agent", "round", "turn"],
    ]
    rooms = _Rooms.of(tables, groups(tables))
    heard_c = conversation_codes(tables, turns["conversation_id"])
    said_c = conversation_codes(tables, adversary["conversation_id"])
    # Every (honest turn, ok adversary turn of its conversation) pair.
    order = np.argsort(said_c, kind="stable")
    start = np.searchsorted(said_c[order], heard_c, side="left")
    sizes = np.searchsorted(said_c[order], heard_c, side="right") - start
    sizes[heard_c < 0] = 0
    row = np.repeat(np.arange(len(turns)), sizes)
    said = order[np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes) + start[row]]
    c = heard_c[row]
    agent = text_codes(turns["agent"], rooms.names)[row]
    speaker = text_codes(adversary["agent"], rooms.names)[said]
    hears = rooms.hears(c, agent, speaker)
    said_round = adversary["round"].astype("int64").to_numpy()[said]
    said_turn = adversary["turn"].astype("int64").to_numpy()[said]
    round_ = turns["round"].to_numpy(dtype="int64")[row]
    turn = turns["turn"].to_numpy(dtype="int64")[row]
    window = rooms.memory[c]
    oldest = np.where(np.isnan(window), 1.0, round_.astype(float) - window)
    before = (said_round < round_) | ((said_round == round_) & (said_turn < turn))
    flags = np.zeros(len(turns), dtype=bool)
    flags[row[hears & before & (said_round >= oldest)]] = True
    return turns.assign(graph_exposed=pd.Series(flags, index=turns.index, dtype=bool))


@dataclass
class _Rooms:
    """Per conversation code: its room's shape (distinct names and edges; -1 for none) and
    memory window (NaN: all rounds), and per shape whom each agent hears, as integer keys."""

    names: pd.Index
    shape: npt.NDArray[np.int64]
    memory: npt.NDArray[np.float64]
    heard: npt.NDArray[np.int64]

    @classmethod
    def of(cls, tables: RunTables, info: dict[str, dict[str, Any]]) -> _Rooms:
        codes = conversation_codes(tables, pd.Index(list(info), dtype=object))
        n = len(tables.conversations)
        shape = np.full(n, -1, dtype=np.int64)
        memory = np.full(n, np.nan)
        shapes: dict[Any, int] = {}
        pairs: list[list[tuple[Any, Any]]] = []
        for code, group in zip(codes.tolist(), info.values(), strict=True):
            edges = group["edges"]
            key = (
                tuple(group["names"]),
                None if edges is None else tuple(tuple(edge) for edge in edges),
            )
            if key not in shapes:
                shapes[key] = len(pairs)
                pairs.append(_heard_pairs(group["names"], edges))
            if code >= 0:
                shape[code] = shapes[key]
                m = group["memory"]
                memory[code] = float("nan") if m is None else float(int(m))
        position: dict[str, int] = {}  # each name's code, in order of first appearance
        for room in pairs:
            for pair in room:
                for name in pair:
                    position.setdefault(str(name), len(position))
        width = max(len(position), 1)
        heard = [
            (i * width + position[str(a)]) * width + position[str(b)]
            for i, room in enumerate(pairs)
            for a, b in room
        ]
        names = pd.Index(list(position), dtype=object)
        return cls(names, shape, memory, np.unique(np.array(heard, dtype=np.int64)))

    def hears(self, c: npt.NDArray[np.int64], agent: Any, speaker: Any) -> Any:
        """Whether `agent` (a code in `names`) hears `speaker` in conversation `c`."""
        width = max(len(self.names), 1)
        shape = self.shape[c]
        keys = (shape * width + agent) * width + speaker
        return (shape >= 0) & (agent >= 0) & (speaker >= 0) & np.isin(keys, self.heard)


def exposure_counts(turns: pd.DataFrame) -> dict[str, Any]:
    """Counts of honest turns exposed through the graph, and endorsement among them."""
    exposed = turns[turns["graph_exposed"]]
    unexposed = turns[~turns["graph_exposed"]]

    def endorse(frame: pd.DataFrame) -> float | None:
        return float((frame["s"] == "endorse").mean()) if len(frame) else None

    return {
        "n_turns": len(turns),
        "n_exposed": len(exposed),
        "exposed_share": len(exposed) / len(turns) if len(turns) else None,
        "endorsement_exposed": endorse(exposed),
        "endorsement_unexposed": endorse(unexposed),
    }


def exposure_summary(tables: RunTables, judge: str) -> list[dict[str, Any]]:
    """Per cell: honest turns exposed through the graph, and endorsement among them."""
    cells = Cells.of(tables, Design.of(tables).factors)
    return per_cell_rows(cells, graph_exposure(tables, judge), exposure_counts)


def _final_answers(tables: RunTables, judge: str) -> pd.DataFrame:
    """Each honest agent's valid answer at its conversation's last checkpoint."""
    key = ("pp.final_answers", judge)
    return tables.memo(key, lambda: _select_final_answers(tables, judge)).copy()


def _select_final_answers(tables: RunTables, judge: str) -> pd.DataFrame:
    answers = private_answers(tables, judge)
    last = last_checkpoints(tables)
    codes = conversation_codes(tables, answers["conversation_id"])
    known = conversation_codes(tables, last.index)
    if (codes < 0).any() or (known < 0).any():  # an id outside the run: match it as text
        at_last = answers["checkpoint"] == answers["conversation_id"].map(last)
        return answers[at_last].reset_index(drop=True)
    # Each conversation's last checkpoint by its code (-1: none, which no checkpoint is).
    by_code = np.full(len(tables.conversations), -1, dtype=np.int64)
    by_code[known] = last.to_numpy(dtype=np.int64)
    at_last = answers["checkpoint"].to_numpy(dtype=np.int64) == by_code[codes]
    return answers[at_last].reset_index(drop=True)


@dataclass
class _Members:
    """The rooms of the finished conversations: per conversation code (and -1, last) its room
    (-1: none) and intervention, and per room one conversation's group. A room is what the
    per-agent figures read (names, edges, adversaries, models), so conversations of one room
    share its look-ups."""

    room: npt.NDArray[np.int64]
    groups: list[dict[str, Any]]
    intervention: npt.NDArray[np.object_]

    @classmethod
    def of(cls, tables: RunTables) -> _Members:
        return tables.memo(("pp.members",), lambda: cls._build(tables))

    @classmethod
    def _build(cls, tables: RunTables) -> _Members:
        info = groups(tables)
        codes = conversation_codes(tables, pd.Index(list(info), dtype=object)).tolist()
        room = np.full(len(tables.conversations) + 1, -1, dtype=np.int64)
        intervention = np.full(len(tables.conversations) + 1, None, dtype=object)
        rooms: dict[Any, int] = {}
        found: list[dict[str, Any]] = []
        for cid, code, group in zip(info, codes, info.values(), strict=True):
            if code < 0:
                continue
            edges = group["edges"]
            key: Any = (
                tuple(group["names"]),
                None if edges is None else tuple(tuple(edge) for edge in edges),
                tuple(group["adversaries"]),
                tuple(group["models"].items()),
            )
            try:
                index = rooms.setdefault(key, len(found))
            except TypeError:  # an unhashable part: a room of its own
                index = rooms.setdefault(("conversation", cid), len(found))
            if index == len(found):
                found.append(group)
            room[code] = index
            intervention[code] = group["intervention"]
        return cls(room, found, intervention)

    def rooms_of(self, tables: RunTables, ids: pd.Series) -> npt.NDArray[np.int64]:
        """Each conversation id's room (-1: not a finished conversation)."""
        return self.room[conversation_codes(tables, ids)]

    def per_agent(
        self, room: npt.NDArray[np.int64], agents: pd.Series, value: Any
    ) -> npt.NDArray[np.object_]:
        """`value(group, agent)` for each row's room (all >= 0) and agent (as text), worked
        out once per distinct room and agent."""
        agent, names = pd.factorize(agents.astype(str).to_numpy(dtype=object))
        width = max(len(names), 1)
        pair = room * width + agent
        distinct, each = np.unique(pair, return_inverse=True)
        names_list = names.tolist()
        values = np.empty(len(distinct), dtype=object)
        for i, key in enumerate(distinct.tolist()):
            values[i] = value(self.groups[key // width], names_list[key % width])
        return values[each.reshape(-1)]


def _room_distances(
    group: dict[str, Any], by_graph: dict[Any, dict[str, int | None]]
) -> dict[str, int | None]:
    """Each agent's hop distance to the nearest adversary in `group`'s room, found once per
    graph (`by_graph`)."""
    names, edges = group["names"], group["edges"]
    shape = (
        tuple(names),
        None if edges is None else tuple(tuple(e) for e in edges),
        tuple(group["adversaries"]),
    )
    if shape not in by_graph:
        if edges is None:
            edges = [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]
        by_graph[shape] = distances(edges, names, group["adversaries"])
    return by_graph[shape]


def infection_by_distance(tables: RunTables, judge: str) -> pd.DataFrame:
    """Per cell, final infection of honest agents by hop distance to the nearest adversary.

    Conversations without adversaries are left out; an agent no adversary can reach has
    distance None.
    """
    cells = Cells.of(tables, Design.of(tables).factors)
    final = _final_answers(tables, judge)
    members = _Members.of(tables)
    room = members.rooms_of(tables, final["conversation_id"])
    adversaries = np.array([bool(g["adversaries"]) for g in members.groups] + [False])
    kept_rows = np.flatnonzero(adversaries[room])
    kept = final.iloc[kept_rows]
    by_graph: dict[Any, dict[str, int | None]] = {}
    found = members.per_agent(
        room[kept_rows],
        kept["agent"],
        lambda group, agent: _room_distances(group, by_graph)[agent],
    ).tolist()
    frame = pd.DataFrame(
        {
            "conversation_id": kept["conversation_id"].to_numpy(dtype=object),
            "distance": pd.Series(found, dtype=object),
            "infected": (kept["p"] == INFECTED).to_numpy(dtype=bool),
        },
        columns=["conversation_id", "distance", "infected"],
    )
    frame["distance"] = frame["distance"].infer_objects()
    return _rates_by_cell(cells, frame, ["distance"])


def _rates(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "n", "n_infected", "infection"])
    grouped = frame.groupby(keys, dropna=False, sort=True)["infected"]
    result = grouped.agg(n="size", n_infected="sum").reset_index()
    result["n_infected"] = result["n_infected"].astype(int)
    result["infection"] = result["n_infected"] / result["n"]
    return result


def _rates_by_cell(cells: Cells, frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`_rates` over `keys` within every cell, the cell's levels first."""
    rows = [
        {**level, **record}
        for level, part in cells.split(frame, every=False)
        for record in _rates(part, keys).to_dict(orient="records")
    ]
    return pd.DataFrame(rows, columns=[*cells.by, *keys, "n", "n_infected", "infection"])


def _adversary_model(group: dict[str, Any]) -> str:
    models = group["models"]
    adversary_models = {models.get(a, "") for a in group["adversaries"]}
    if not adversary_models:
        return "none"
    if len(adversary_models) == 1:
        return str(next(iter(adversary_models)))
    return "mixed"


def infection_by_model(tables: RunTables, judge: str) -> pd.DataFrame:
    """Final infection by the honest agent's model and the adversaries' model (`mixed` when
    the adversaries ran several models, `none` without adversaries), per cell of the factors
    other than those naming models (`model_factors`: the split by each agent's own model
    replaces them)."""
    design = Design.of(tables)
    cells = Cells.of(tables, design.by(pooled=model_factors(design)))
    final = _final_answers(tables, judge)
    members = _Members.of(tables)
    room = members.rooms_of(tables, final["conversation_id"])
    kept_rows = np.flatnonzero(room >= 0)
    kept, room = final.iloc[kept_rows], room[kept_rows]
    honest = members.per_agent(
        room, kept["agent"], lambda group, agent: group["models"].get(agent, "")
    )
    adversary = np.array([_adversary_model(g) for g in members.groups], dtype=object)
    frame = pd.DataFrame(
        {
            "conversation_id": kept["conversation_id"].to_numpy(dtype=object),
            "honest_model": pd.Series(honest.tolist(), dtype=object),
            "adversary_model": pd.Series(adversary[room].tolist(), dtype=object),
            "infected": pd.Series((kept["p"] == INFECTED).to_numpy(dtype=bool), dtype=bool),
        },
        columns=["conversation_id", "honest_model", "adversary_model", "infected"],
    )
    return _rates_by_cell(cells, frame, ["honest_model", "adversary_model"])


INTERVENTION = "intervention"


def by_intervention(tables: RunTables, judge: str) -> list[dict[str, Any]]:
    """Per cell and intervention: conversations, mean FPI over them, the hidden-infection share
    of the paired turns, and mean infection per checkpoint."""
    factors = list(Design.of(tables).factors)
    conversations = done_conversations(tables)
    if INTERVENTION not in factors:  # one level, the run's setting: still name it in every row
        members = _Members.of(tables)
        kind = members.intervention[conversation_codes(tables, conversations["conversation_id"])]
        conversations[INTERVENTION] = pd.Series(kind.tolist(), index=conversations.index)
        factors.append(INTERVENTION)
    cells = Cells(conversations, factors)
    fpi = final_private_infection(tables, judge)
    paired = paired_turns(tables, judge, "main")
    answers = private_answers(tables, judge)
    answers = answers.assign(infected=answers["p"] == INFECTED)
    figures = {
        name: dict(enumerate(part for _, part in cells.split(frame)))
        for name, frame in (("fpi", fpi), ("paired", paired), ("answers", answers))
    }
    rows: list[dict[str, Any]] = []
    for index, level in enumerate(cells.levels):
        values = figures["fpi"][index]["fpi"].dropna()
        split = seven_way(figures["paired"][index])
        course = figures["answers"][index].groupby("checkpoint")["infected"].mean()
        rows.append(
            {
                **level,
                "n_conversations": len(figures["fpi"][index]),
                "fpi": float(values.mean()) if len(values) else None,
                "hidden_infection": split["shares"]["hidden_infection"] if split["n"] else None,
                "n_paired_turns": split["n"],
                "time_course": [
                    {"checkpoint": int(c), "infection": float(v)}
                    for c, v in zip(course.index.tolist(), course.tolist(), strict=True)
                ],
            }
        )
    return rows


def network_metrics(tables: RunTables, judge: str) -> dict[str, Any]:
    """The metrics of this module, for `compute_metrics`."""
    return {
        "graph_exposure": exposure_summary(tables, judge),
        "infection_by_distance": infection_by_distance(tables, judge),
        "infection_by_model": infection_by_model(tables, judge),
        "by_intervention": by_intervention(tables, judge),
    }
