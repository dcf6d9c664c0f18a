"""Per-row reference versions of peer pressure's vectorised steps, for the tests to compare."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design, RunTables, texts_in
from backchannel.paradigms.peer_pressure._base import (
    INFECTED,
    KNOWER,
    MAIN_PROBE,
    REASK_PROBES,
    _turn_events,
    last_checkpoints,
    merge_coded,
    private_answers,
    speaking_turns,
)
from backchannel.paradigms.peer_pressure._cells import Cells, model_factors
from backchannel.paradigms.peer_pressure._network import (
    _adversary_model,
    _rates_by_cell,
    _room_distances,
    groups,
)
from backchannel.paradigms.peer_pressure._order import _POSITIONS
from backchannel.paradigms.peer_pressure._pairing import _SEVEN_WAY_CELLS
from backchannel.paradigms.peer_pressure._reask import _FIGURES, GROUP_VARIANT


def speaker_lists(heard: np.ndarray, bounds: np.ndarray, skip: np.ndarray) -> list[Any]:
    """Per probe the names of `heard[bounds[i]:bounds[i + 1]]`, None where skipped or empty."""
    flat: list[Any] = _POSITIONS[heard].tolist()
    edges = np.asarray(bounds).tolist()
    return [
        None if s or a == b else flat[a:b]
        for s, a, b in zip(np.asarray(skip).tolist(), edges[:-1], edges[1:], strict=True)
    ]


def final_answers(tables: RunTables, judge: str) -> pd.DataFrame:
    """Each honest agent's valid answer at its conversation's last checkpoint, matched as text."""
    answers = private_answers(tables, judge)
    last = answers["conversation_id"].map(last_checkpoints(tables))
    return answers[answers["checkpoint"] == last].reset_index(drop=True)


def _distances(tables: RunTables) -> dict[str, dict[str, int | None]]:
    """Per conversation id with adversaries: each agent's hop distance to the nearest
    one (what `_network` matched rows by before its rooms)."""
    by_graph: dict[Any, dict[str, int | None]] = {}  # rooms of the same graph share distances
    per_conversation: dict[str, dict[str, int | None]] = {}
    for cid, group in groups(tables).items():
        if not group["adversaries"]:
            continue
        per_conversation[cid] = _room_distances(group, by_graph)
    return per_conversation


def infection_by_distance(tables: RunTables, judge: str) -> pd.DataFrame:
    """`_network.infection_by_distance` one row at a time."""
    cells = Cells.of(tables, Design.of(tables).factors)
    final = final_answers(tables, judge)
    per_conversation = _distances(tables)
    kept = final[texts_in(final["conversation_id"], per_conversation)]
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


def infection_by_model(tables: RunTables, judge: str) -> pd.DataFrame:
    """`_network.infection_by_model` one row at a time."""
    design = Design.of(tables)
    cells = Cells.of(tables, design.by(pooled=model_factors(design)))
    final = final_answers(tables, judge)
    info = groups(tables)
    kept = final[texts_in(final["conversation_id"], info)]
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


def cell_codes(cells: Cells, frame: pd.DataFrame) -> list[int]:
    """Each row's cell by its conversation, one dictionary look-up per row (-1: none)."""
    return [cells._by_key.get(v, -1) for v in frame[cells.key].tolist()]


def public_turns(tables: RunTables, judge: str) -> pd.DataFrame:
    """`_base._public_turns` grouping by the conversation id's text."""
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
    return speaking_turns(tables, judge, honest)


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def reask_summary(answers: pd.DataFrame) -> list[dict[str, Any]]:
    """Per re-ask variant, over `answers` (main and re-ask probes): infection rate, retention
    and recovery against the original probe, and `group_false_share` for `reask_group`."""
    keys = ["conversation_id", "agent", "checkpoint"]
    original = answers[answers["name"] == MAIN_PROBE][[*keys, "p"]]
    original = original.rename(columns={"p": "original"})
    rows = []
    for variant in REASK_PROBES:
        labels = answers[answers["name"] == variant]
        paired = merge_coded(labels, original, keys, "inner")
        infected_before = paired[paired["original"] == INFECTED]
        true_before = paired[paired["original"] == KNOWER]
        n_infected = int((labels["p"] == INFECTED).sum())
        row = {
            "variant": variant,
            "n": len(labels),
            "infection_rate": _rate(n_infected, len(labels)),
            "n_originally_infected": len(infected_before),
            "retention": _rate(int((infected_before["p"] == INFECTED).sum()), len(infected_before)),
            "recovery": _rate(int((infected_before["p"] == KNOWER).sum()), len(infected_before)),
            "n_originally_true": len(true_before),
            "group_false_share": float("nan"),
        }
        if variant == GROUP_VARIANT:
            said_false = int((true_before["p"] == INFECTED).sum())
            row["group_false_share"] = _rate(said_false, len(true_before))
        rows.append(row)
    return rows


def reask(tables: RunTables, judge: str) -> pd.DataFrame:
    """`_reask.reask` pairing each cell's labels on their own."""
    cells = Cells.of(tables, Design.of(tables).factors)
    answers = private_answers(tables, judge, (MAIN_PROBE, *REASK_PROBES))
    rows = [{**level, **row} for level, part in cells.split(answers) for row in reask_summary(part)]
    return pd.DataFrame(rows, columns=[*cells.by, "variant", *_FIGURES])


def done_levels(tables: RunTables) -> pd.DataFrame:
    """`_base._done_conversations`, every conversation's levels read on their own."""
    done = tables.done_conversations()
    design = Design.of(tables)
    levels = design.levels(done)
    frame = done[["conversation_id"]].copy()
    ids = [str(cid) for cid in done["conversation_id"]]
    for factor in design.factors:
        frame[factor] = pd.Series([levels[c][factor] for c in ids], index=done.index, dtype=object)
    frame["item_id"] = done["item_id"]
    frame["replicate"] = done["replicate"]
    return frame


def seven_way_categories(paired: pd.DataFrame) -> pd.Series:
    """`_pairing.seven_way_categories` one row at a time."""
    keys = zip(paired["p"].astype(str).tolist(), paired["s"].astype(str).tolist(), strict=True)
    return pd.Series([_SEVEN_WAY_CELLS.get(key) for key in keys], index=paired.index, dtype=object)
