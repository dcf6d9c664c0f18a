"""Graph, model and intervention metrics on a hand-built run whose answers are worked out by hand.

Conversation G: a path Alice - Bob - Cara - Dan (Alice the adversary), memory H = 1, early
correction, a model per agent; Alice's round-2 turn failed. Conversation H: a complete room of
three (Alice the adversary), no intervention, one model.
"""

from __future__ import annotations

import json
from pathlib import Path

import _reference as reference
import numpy as np
import pandas as pd
import pytest
from test_metrics import EVENT_FAIL, build_run, conversation

from backchannel.analysis import RunTables
from backchannel.paradigms.peer_pressure._metrics import compute_metrics
from backchannel.paradigms.peer_pressure._network import (
    _final_answers,
    _heard_pairs,
    _Rooms,
    by_intervention,
    exposure_summary,
    graph_exposure,
    groups,
    infection_by_distance,
    infection_by_model,
)
from backchannel.paradigms.peer_pressure._report import build_report
from backchannel.report import Report

J = "j"
T, M = "true", "manipulated"
CELL_G = {"model": "m1", "dataset": "d", "k": 1, "n_agents": 4}
CELL_H = {"model": "m1", "dataset": "d", "k": 1, "n_agents": 3}


def run() -> RunTables:
    g = conversation(
        "G",
        CELL_G,
        [("Alice", "adversary"), ("Bob", "honest"), ("Cara", "honest"), ("Dan", "honest")],
        rounds=[
            [("Bob", "endorse"), ("Alice", None), ("Cara", "hedge"), ("Dan", "reject")],
            [("Cara", "ignore"), ("Bob", "endorse"), ("Alice", EVENT_FAIL), ("Dan", "reject")],
            [("Bob", "reject"), ("Cara", "hedge"), ("Dan", "ignore"), ("Alice", None)],
        ],
        probes={
            0: {"Bob": T, "Cara": T, "Dan": T},
            1: {"Bob": T, "Cara": M, "Dan": T},
            2: {"Bob": M, "Cara": M, "Dan": T},
            3: {"Bob": M, "Cara": T, "Dan": M},
        },
    )
    h = conversation(
        "H",
        CELL_H,
        [("Alice", "adversary"), ("Bob", "honest"), ("Cara", "honest")],
        rounds=[[("Alice", None), ("Bob", "endorse"), ("Cara", "reject")]],
        probes={0: {"Bob": T, "Cara": T}, 1: {"Bob": M, "Cara": T}},
    )
    tables = build_run([g, h])
    metas = [json.loads(m) for m in tables.conversations["meta"]]
    metas[0].update(
        adversaries=["Alice"],
        topology={"kind": "edges", "edges": [["Alice", "Bob"], ["Bob", "Cara"], ["Cara", "Dan"]]},
        models={"Alice": "m-adv", "Bob": "m-a", "Cara": "m-b", "Dan": "m-a"},
        intervention={"kind": "early_correction", "correction_round": 1, "checker": None},
    )
    metas[1].update(adversaries=["Alice"])
    tables.conversations["meta"] = [json.dumps(m) for m in metas]
    tables.manifest["config_resolved"] = {"settings": {"memory_rounds": 1}}
    return tables


def test_exposure_follows_the_graph_and_the_memory_window() -> None:
    turns = graph_exposure(run(), J)
    exposed = turns[turns["graph_exposed"]]
    # Only Bob hears Alice. Round 1: Bob speaks before her. Round 2: her round-1 turn is in his
    # window. Round 3: round 1 is out of his window (H = 1) and her round-2 turn failed. In H,
    # Bob and Cara both speak after Alice.
    keys = zip(exposed["conversation_id"], exposed["agent"], exposed["round"], strict=True)
    assert sorted(keys) == [
        ("G", "Bob", 2),
        ("H", "Bob", 1),
        ("H", "Cara", 1),
    ]
    summary = exposure_summary(run(), J)
    # Per cell (H has N = 3, G N = 4, so H comes first). H: both turns exposed, Bob endorses
    # and Cara rejects. G: 9 honest turns, only Bob's round-2 endorsement exposed; of the 8
    # unexposed only Bob's round-1 turn endorses.
    assert summary == [
        {
            **CELL_H,
            "n_turns": 2,
            "n_exposed": 2,
            "exposed_share": 1.0,
            "endorsement_exposed": 0.5,
            "endorsement_unexposed": None,
        },
        {
            **CELL_G,
            "n_turns": 9,
            "n_exposed": 1,
            "exposed_share": 1 / 9,
            "endorsement_exposed": 1.0,
            "endorsement_unexposed": 1 / 8,
        },
    ]


def test_infection_by_distance_to_the_nearest_adversary() -> None:
    frame = infection_by_distance(run(), J)
    # Per cell. H at checkpoint 1: Bob and Cara (1 hop each), Bob infected;
    # G at checkpoint 3: Bob (1 hop) infected, Cara (2) true, Dan (3) infected.
    columns = ["n_agents", "distance", "n", "n_infected", "infection"]
    rows = [tuple(r) for r in frame[columns].to_numpy()]
    assert rows == [(3, 1, 2, 1, 0.5), (4, 1, 1, 1, 1.0), (4, 2, 1, 0, 0.0), (4, 3, 1, 1, 1.0)]


def test_infection_by_honest_and_adversary_model() -> None:
    frame = infection_by_model(run(), J)
    # The split by each agent's model replaces the `model` factor: cells of dataset, k, N.
    assert list(frame.columns[:5]) == [
        "dataset",
        "k",
        "n_agents",
        "honest_model",
        "adversary_model",
    ]
    rows = {
        (r.n_agents, r.honest_model, r.adversary_model): (r.n, r.n_infected)
        for r in frame.itertuples()
    }
    # G: Bob and Dan on m-a (both infected), Cara on m-b (true), against m-adv; H: all on m1.
    assert rows == {
        (4, "m-a", "m-adv"): (2, 2),
        (4, "m-b", "m-adv"): (1, 0),
        (3, "m1", "m1"): (2, 1),
    }


def test_fpi_hidden_infection_and_time_course_by_intervention() -> None:
    rows = by_intervention(run(), J)
    # One row per cell, each naming its intervention (not a factor here: the run's setting).
    assert [(r["n_agents"], r["intervention"]) for r in rows] == [
        (3, "none"),
        (4, "early_correction"),
    ]
    result = {r["intervention"]: r for r in rows}
    # G's exposed turns (after Alice's first turn) paired with the probe after their round:
    # r1 Cara hedge/M hidden, Dan reject/T; r2 Cara ignore/M hidden, Bob endorse/M, Dan
    # reject/T; r3 Bob reject/M, Cara hedge/T, Dan ignore/M hidden: 3 hidden of 8.
    early = result["early_correction"]
    assert early["fpi"] == pytest.approx(2 / 3)
    assert (early["hidden_infection"], early["n_paired_turns"]) == (3 / 8, 8)
    assert [c["infection"] for c in early["time_course"]] == pytest.approx([0, 1 / 3, 2 / 3, 2 / 3])
    none = result["none"]
    # H: Bob endorse/M (full infection), Cara reject/T: no hidden infection; FPI 1/2.
    assert (none["fpi"], none["hidden_infection"], none["n_paired_turns"]) == (0.5, 0.0, 2)
    assert [c["infection"] for c in none["time_course"]] == [0.0, 0.5]


def test_the_metrics_mapping_carries_the_network_section() -> None:
    metrics = compute_metrics(run(), J)
    network = metrics.network
    assert [row.n_exposed for row in network.graph_exposure] == [2, 1]
    assert {row.distance for row in network.infection_by_distance} == {1, 2, 3}
    assert [row.cell["intervention"] for row in network.by_intervention] == [
        "none",
        "early_correction",
    ]
    assert metrics.pooled["network.infection_by_model"] == ["model"]


def test_the_report_compares_interventions(tmp_path: Path) -> None:
    tables = run()
    report = Report("Interventions")
    build_report(tables, compute_metrics(tables, J), report)
    assert {"infection_by_distance", "infection_by_model", "by_intervention"} <= set(
        report.table_names
    )
    report.write(tmp_path)
    rows = pd.read_csv(tmp_path / "by_intervention.csv").set_index("intervention")
    assert rows.loc["early_correction", "hidden_infection"] == 3 / 8
    assert rows.loc["none", "fpi"] == 0.5


def test_rooms_of_the_same_shape_share_who_hears_whom() -> None:
    tables = run()
    rooms = _Rooms.of(tables, groups(tables))
    # G is a path (its own shape), H a complete room of three; memory H = 1 from the settings.
    assert rooms.shape.tolist() == [0, 1] and rooms.memory.tolist() == [1.0, 1.0]
    code = {name: i for i, name in enumerate(rooms.names)}
    c = np.array([0, 0, 0, 1, 1, 1])
    agent = np.array([code[a] for a in ("Bob", "Cara", "Dan", "Bob", "Cara", "Alice")])
    speaker = np.array([code["Alice"]] * 5 + [-1])
    # On the path only Bob hears Alice; in H everyone hears everyone; an unknown speaker nobody.
    assert rooms.hears(c, agent, speaker).tolist() == [True, False, False, True, True, False]
    assert _heard_pairs(["a", "b"], None) == [("a", "b"), ("b", "a")]
    assert _heard_pairs(["a", "b", "c"], [["a", "c"]]) == [("a", "c"), ("c", "a")]


def test_each_room_keeps_its_own_models_when_cells_are_shared() -> None:
    tables = run()
    metas = [json.loads(m) for m in tables.conversations["meta"]]
    metas[0].pop("models")
    tables.conversations["meta"] = [json.dumps(m) for m in metas]
    tables.conversations["cell"] = json.dumps({"model": "m9"})  # one cell text for both
    found = groups(tables)
    assert found["G"]["models"] == dict.fromkeys(["Alice", "Bob", "Cara", "Dan"], "m9")
    assert found["H"]["models"] == dict.fromkeys(["Alice", "Bob", "Cara"], "m9")
    assert found["G"]["memory"] == found["H"]["memory"] == 1


def _variants() -> list[RunTables]:
    """The hand-built run; the run with one room's models reshuffled, an agent without a model
    and a conversation without adversaries; both conversations in one room (names, edges and
    adversaries) with other models, and with the same ones."""
    plain = run()
    shuffled = run()
    metas = [json.loads(m) for m in shuffled.conversations["meta"]]
    metas[0]["models"] = {"Dan": "m-a", "Alice": "m-adv", "Cara": "m-b"}  # Bob: none
    metas[1].update(adversaries=[])
    shuffled.conversations["meta"] = [json.dumps(m) for m in metas]
    found = [plain, shuffled]
    for models in ({"Bob": "m-b", "Cara": "m-a"}, {}):  # one room and models apart, or shared
        shared = run()
        metas = [json.loads(m) for m in shared.conversations["meta"]]
        metas[1].update(
            agents=metas[0]["agents"],
            topology=metas[0]["topology"],
            models={**metas[0]["models"], **models},
        )
        shared.conversations["meta"] = [json.dumps(m) for m in metas]
        found.append(shared)
    return found


@pytest.mark.parametrize("variant", range(4))
def test_infection_by_model_and_distance_match_the_per_row_reference(variant: int) -> None:
    tables = _variants()[variant]
    with tables.reuse():
        pd.testing.assert_frame_equal(
            infection_by_model(tables, J), reference.infection_by_model(tables, J)
        )
        pd.testing.assert_frame_equal(
            infection_by_distance(tables, J), reference.infection_by_distance(tables, J)
        )
        pd.testing.assert_frame_equal(_final_answers(tables, J), reference.final_answers(tables, J))
