"""Metrics of who heard whom, of mixed-model rooms and of interventions.

Exposure through the graph, infection by graph distance from the nearest adversary, final
infection split by the honest agent's model and the adversaries' model, and FPI, hidden
infection and time course per intervention. Each reads the group stored with the conversation.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables
from backchannel.engine import distances
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    done_conversations,
    last_checkpoints,
    private_answers,
    public_turns,
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
    columns = (done[c].tolist() for c in ("conversation_id", "meta", "cell"))
    for cid, meta, cell_text in zip(*columns, strict=True):
        meta = _as_dict(meta)
        cell = _as_dict(cell_text)
        settings = {**resolved, **cell}
        names = [a["name"] for a in meta.get("agents", [])]
        default_model = str(cell.get("model", settings.get("model", "")))
        topology = meta.get("topology")
        found[str(cid)] = {
            "names": names,
            "adversaries": list(meta.get("adversaries", [])),
            "edges": None if topology is None else topology["edges"],
            "memory": settings.get("memory_rounds"),
            "models": meta.get("models") or {name: default_model for name in names},
            "intervention": (meta.get("intervention") or {}).get("kind", "none"),
        }
    return found


def _listeners(info: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Who hears whom: one row (conversation_id, agent, speaker) per agent and agent it hears.

    In a complete room every agent hears every other; otherwise the graph's neighbours."""
    rows: list[tuple[str, str, str]] = []
    for cid, group in info.items():
        if group["edges"] is None:
            names = group["names"]
            rows += [(cid, a, b) for a in names for b in names if a != b]
        else:
            for a, b in group["edges"]:
                rows += [(cid, a, b), (cid, b, a)]
    frame = pd.DataFrame(rows, columns=["conversation_id", "agent", "speaker"], dtype=object)
    return frame.drop_duplicates()


def graph_exposure(tables: RunTables, judge: str) -> pd.DataFrame:
    """Honest turns with `graph_exposed`: an ok adversary turn that the speaker hears came
    before it and lies within its memory window (rounds r-H..r)."""
    turns = public_turns(tables, judge)
    events = tables.core_events
    adversary = events.loc[
        (events["kind"] == "message")
        & (events["name"] == "turn")
        & (events["role"] == "adversary")
        & (events["status"] == "ok"),
        ["conversation_id", "agent", "round", "turn"],
    ]
    adversary = pd.DataFrame(
        {
            "conversation_id": adversary["conversation_id"].astype(object),
            "speaker": adversary["agent"].astype(object),
            "said_round": adversary["round"].astype("int64"),
            "said_turn": adversary["turn"].astype("int64"),
        }
    )
    info = groups(tables)
    memory = pd.Series({cid: group["memory"] for cid, group in info.items()}, dtype=object).map(
        lambda m: float("nan") if m is None else float(int(m))
    )
    heard = pd.DataFrame(
        {
            "row": range(len(turns)),
            "conversation_id": turns["conversation_id"].astype(object).to_numpy(),
            "agent": turns["agent"].astype(object).to_numpy(),
            "round": turns["round"].to_numpy(dtype="int64"),
            "turn": turns["turn"].to_numpy(dtype="int64"),
        }
    )
    pairs = heard.merge(adversary, on="conversation_id").merge(
        _listeners(info), on=["conversation_id", "agent", "speaker"]
    )
    window = pairs["conversation_id"].map(memory).to_numpy(dtype=float)
    oldest = np.where(np.isnan(window), 1.0, pairs["round"].to_numpy(dtype=float) - window)
    before = (pairs["said_round"] < pairs["round"]) | (
        (pairs["said_round"] == pairs["round"]) & (pairs["said_turn"] < pairs["turn"])
    )
    flagged = pairs.loc[before.to_numpy() & (pairs["said_round"].to_numpy() >= oldest), "row"]
    flags = np.zeros(len(turns), dtype=bool)
    flags[flagged.to_numpy(dtype="int64")] = True
    return turns.assign(graph_exposed=pd.Series(flags, index=turns.index, dtype=bool))


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
    answers = private_answers(tables, judge)
    last = answers["conversation_id"].map(last_checkpoints(tables))
    return answers[answers["checkpoint"] == last].reset_index(drop=True)


def _distances(tables: RunTables) -> dict[str, dict[str, int | None]]:
    """Per conversation with adversaries: each agent's hop distance to the nearest one."""
    by_graph: dict[Any, dict[str, int | None]] = {}  # rooms of the same graph share distances
    per_conversation: dict[str, dict[str, int | None]] = {}
    for cid, group in groups(tables).items():
        if not group["adversaries"]:
            continue
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
        per_conversation[cid] = by_graph[shape]
    return per_conversation


def infection_by_distance(tables: RunTables, judge: str) -> pd.DataFrame:
    """Per cell, final infection of honest agents by hop distance to the nearest adversary.

    Conversations without adversaries are left out; an agent no adversary can reach has
    distance None.
    """
    cells = Cells.of(tables, Design.of(tables).factors)
    final = _final_answers(tables, judge)
    per_conversation = _distances(tables)
    kept = final[final["conversation_id"].astype(str).isin(per_conversation)]
    found = [
        per_conversation[str(cid)][str(agent)]
        for cid, agent in zip(kept["conversation_id"].tolist(), kept["agent"].tolist(), strict=True)
    ]
    frame = pd.DataFrame(
        {
            "conversation_id": kept["conversation_id"].to_numpy(dtype=object),
            "distance": pd.Series(found, dtype=object),
            "infected": list(kept["p"] == INFECTED),
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
    other than those naming models (`model_factors`: the split by each agent's model replaces
    them)."""
    design = Design.of(tables)
    cells = Cells.of(tables, design.by(pooled=model_factors(design)))
    final = _final_answers(tables, judge)
    info = groups(tables)
    kept = final[final["conversation_id"].astype(str).isin(info)]
    ids = kept["conversation_id"].astype(str)
    adversary = {cid: _adversary_model(group) for cid, group in info.items()}
    honest = [
        info[cid]["models"].get(str(agent), "")
        for cid, agent in zip(ids.tolist(), kept["agent"].tolist(), strict=True)
    ]
    frame = pd.DataFrame(
        {
            "conversation_id": kept["conversation_id"].to_numpy(dtype=object),
            "honest_model": pd.Series(honest, dtype=object),
            "adversary_model": pd.Series(list(ids.map(adversary)), dtype=object),
            "infected": pd.Series(list(kept["p"] == INFECTED), dtype=bool),
        },
        columns=["conversation_id", "honest_model", "adversary_model", "infected"],
    )
    return _rates_by_cell(cells, frame, ["honest_model", "adversary_model"])


INTERVENTION = "intervention"


def by_intervention(tables: RunTables, judge: str) -> list[dict[str, Any]]:
    """Per cell and intervention: conversations, mean FPI over them, the hidden-infection share
    of the paired turns, and mean infection per checkpoint."""
    kind = {cid: group["intervention"] for cid, group in groups(tables).items()}
    factors = list(Design.of(tables).factors)
    conversations = done_conversations(tables)
    if INTERVENTION not in factors:  # one level, the run's setting: still name it in every row
        conversations[INTERVENTION] = conversations["conversation_id"].astype(str).map(kind)
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
