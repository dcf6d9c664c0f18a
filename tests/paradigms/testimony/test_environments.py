"""The shipped environments, their build script and the generator."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from backchannel.paradigms.testimony import (
    Environment,
    add_move,
    extract_chain,
    generate,
    load_environments,
    verify,
)
from backchannel.paradigms.testimony._build_environments import build, dump
from backchannel.paradigms.testimony._hitom import load_hitom, parse_choices, stories_from_records

from ._stories import EGGPLANT, EGGPLANT_CHOICES, LETTUCE, LETTUCE_CHOICES, ONION, PEAS

HITOM = Path("/work/shared/data/hitom/Hi-ToM_data.json")
DATA = resources.files("backchannel.paradigms.testimony").joinpath("data")


def test_shipped_environments_are_120_distinct_verified_and_balanced() -> None:
    environments = load_environments()
    assert len(environments) == 120
    assert len({e.id for e in environments}) == 120
    kinds = Counter((e.deception, e.key_kind) for e in environments)
    assert kinds == {
        ("event", "direct"): 20,
        ("event", "broadcast"): 20,
        ("coverage", "direct"): 20,
        ("coverage", "broadcast"): 20,
        ("source", "direct"): 40,
    }
    for env in environments:
        assert verify(env) == [], env.id
    # No state chain is used twice: 120 distinct stories, each the unit of every pair.
    chains = {(e.chain.target, e.chain.nodes) for e in environments}
    assert len(chains) == 120
    assert {e.source for e in environments} == {"hitom"}


def test_shipped_file_counts_its_rejections_and_adaptations() -> None:
    data = json.loads(DATA.joinpath("environments.json").read_text(encoding="utf-8"))
    assert data["stories"] == 120
    environments = data["environments"]
    adapted = [e for e in environments if e["adaptations"]]
    assert data["as_is"] == len(environments) - len(adapted)
    added = [e for e in adapted if any(a.startswith("added move") for a in e["adaptations"])]
    assert data["added_moves"] == len(added)
    windows = [e for e in adapted if any(a.startswith("adapted windows") for a in e["adaptations"])]
    assert data["adapted_windows"] == len(windows)
    assert data["generated"] == 0
    # Every candidate chain (one per object of a story) either passes the plain rule as it is
    # or is counted under the one rule that refused it.
    assert sum(data["rule_rejections"].values()) + data["as_is"] == data["chains"]
    assert data["rule_rejections"]["fewer than 3 moves"] > 0
    # Every chain not used is listed with its reason.
    used = {e["id"] for e in environments}
    assert not used & set(data["rejected"])
    assert len(used) + len(data["rejected"]) == data["chains"]


def test_license_and_provenance_ship_beside_the_data() -> None:
    assert "Apache License" in DATA.joinpath("LICENSE.hitom").read_text(encoding="utf-8")
    provenance = DATA.joinpath("PROVENANCE.md").read_text(encoding="utf-8")
    assert "Hi-ToM" in provenance and "_build_environments" in provenance


def test_environment_json_round_trips() -> None:
    env = load_environments()[0]
    assert Environment.from_dict(json.loads(json.dumps(env.as_dict()))) == env
    c1 = env.as_dict("C1")
    assert c1["condition"] == "C1"
    assert [m for m in c1["messages"] if m["sender"] == env.key] == [env.false_message.as_dict()]


def test_build_is_deterministic_adapts_and_fills_with_generated_stories() -> None:
    records = [
        {"story": story, "sample_id": i, "choices": choices}
        for i, (story, choices) in enumerate(
            [
                (LETTUCE, LETTUCE_CHOICES),
                (EGGPLANT, EGGPLANT_CHOICES),
                (PEAS, LETTUCE_CHOICES),
                (ONION, LETTUCE_CHOICES),
            ]
        )
    ]
    first = build(stories_from_records(records), count=6)
    assert first == build(stories_from_records(records), count=6)
    assert first["chains"] == 6  # lettuce, eggplant, peas and potato, onion and lemon
    assert first["rule_rejections"] == {
        "fewer than 3 moves": 2,
        "(b) the honest accounts do not settle the endpoint": 1,
        "(b) two roles already settle the endpoint": 2,
    }
    # The lettuce and the eggplant return to where they started: adapted windows settle them.
    # The potato passes as it is. The peas' added move names a container the (borrowed) vote
    # options lack, and Owen makes two of the onion's three moves, so both stay out.
    assert first["rejected"] == {
        "hitom-0002-peas": "the chain has 2 moves; at least 3 are needed",
        "hitom-0003-lemon": "the chain has 1 move; at least 3 are needed",
        "hitom-0003-onion": "(b) two roles (Emily and Owen) already settle the endpoint",
    }
    assert (first["as_is"], first["adapted_windows"], first["added_moves"]) == (1, 2, 0)
    assert first["generated"] == 3
    made = [
        (e["id"], e["deception"], e["key_message_kind"], e["source"]) for e in first["environments"]
    ]
    # Sorted by id, the environments take the deception types in turn.
    assert made == [
        ("gen-m3-s0", "event", "direct", "generated"),
        ("gen-m4-s1", "coverage", "direct", "generated"),
        ("gen-m5-s2", "source", "direct", "generated"),
        ("hitom-0000-lettuce", "event", "broadcast", "hitom"),
        ("hitom-0001-eggplant", "coverage", "broadcast", "hitom"),
        ("hitom-0002-potato", "source", "direct", "hitom"),
    ]


def test_an_added_move_keeps_the_endpoint_and_names_its_actor() -> None:
    found = add_move(PEAS, "hitom-0800", "peas", parse_choices(LETTUCE_CHOICES))
    assert found is not None
    # Logan made no movement in the hallway before Emily's final move: he moves the peas to
    # the first option the chain never visits.
    assert found.actor == "Logan" and found.container == "blue_drawer"
    assert [n.container for n in found.chain.nodes] == [
        "blue_suitcase",
        "blue_drawer",
        "red_crate",
        "green_bottle",
    ]
    assert found.chain.endpoint == extract_chain(PEAS, "x").endpoint
    assert found.describe() == (
        "added move: Logan, who made no movement, moves the peas to the blue_drawer"
    )


@pytest.mark.skipif(not HITOM.exists(), reason="the Hi-ToM source file is not on this machine")
def test_shipped_file_is_what_the_build_script_makes() -> None:
    shipped = DATA.joinpath("environments.json").read_text(encoding="utf-8")
    assert dump(build(load_hitom(HITOM))) == shipped


def test_generator_is_deterministic_and_verified() -> None:
    first = generate(moves=5, seed=3, deception="coverage", key_kind="broadcast")
    again = generate(moves=5, seed=3, deception="coverage", key_kind="broadcast")
    assert first == again
    env = first.environment
    assert env.chain.moves == 5 and env.key_kind == "broadcast" and env.source == "generated"
    assert verify(env) == []
    other = generate(moves=5, seed=4, deception="coverage", key_kind="broadcast").environment
    assert other.chain != env.chain


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"moves": 2}, "at least 3 moves"),
        ({"roles": ("A", "B")}, "5 distinct roles"),
        ({"containers": ("box",)}, "2 distinct containers"),
    ],
)
def test_generator_refuses_impossible_parameters(kwargs: dict, message: str) -> None:
    arguments = {"moves": 4, "seed": 0, "deception": "event", "key_kind": "direct", **kwargs}
    with pytest.raises(ValueError, match=message):
        generate(**arguments)
