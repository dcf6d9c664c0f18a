"""The shipped environments, their build script and the generator."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from backchannel.paradigms.testimony import Environment, generate, load_environments, verify
from backchannel.paradigms.testimony._build_environments import build, dump
from backchannel.paradigms.testimony._hitom import load_hitom, stories_from_records

from ._stories import EGGPLANT, EGGPLANT_CHOICES, LETTUCE, LETTUCE_CHOICES, PEAS

HITOM = Path("/work/shared/data/hitom/Hi-ToM_data.json")
DATA = resources.files("backchannel.paradigms.testimony").joinpath("data")


def test_shipped_environments_are_120_verified_and_balanced() -> None:
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
    # A story serves each deception type at most once.
    assert not [
        k
        for k, n in Counter((e.chain.story_id, e.deception) for e in environments).items()
        if n > 1
    ]


def test_shipped_file_counts_its_rejections() -> None:
    data = json.loads(DATA.joinpath("environments.json").read_text(encoding="utf-8"))
    assert data["stories"] == data["accepted_stories"] + data["rejected_stories"]
    assert sum(data["rejection_reasons"].values()) == data["rejected_stories"]
    assert len(data["rejected"]) == data["rejected_stories"] > 0


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


def test_build_is_deterministic_and_rejects_short_stories() -> None:
    records = [
        {"story": story, "sample_id": i, "choices": choices}
        for i, (story, choices) in enumerate(
            [(LETTUCE, LETTUCE_CHOICES), (EGGPLANT, EGGPLANT_CHOICES), (PEAS, LETTUCE_CHOICES)]
        )
    ]
    plan = (("event", ("direct", "broadcast")), ("coverage", ("direct",)), ("source", ("direct",)))
    first = build(stories_from_records(records), plan)  # type: ignore[arg-type]
    assert first == build(stories_from_records(records), plan)  # type: ignore[arg-type]
    assert first["rejected"] == {"hitom-0002": "the chain has 2 moves; at least 3 are needed"}
    assert first["rejection_reasons"] == {"fewer than 3 moves": 1}
    made = [(e["id"], e["key_message_kind"]) for e in first["environments"]]
    # Types take stories in id order, cycling, each type starting where the last one stopped.
    assert made == [
        ("hitom-0000-event", "direct"),
        ("hitom-0001-event", "broadcast"),
        ("hitom-0000-coverage", "direct"),
        ("hitom-0001-source", "direct"),
    ]
    with pytest.raises(ValueError, match="not enough stories"):
        build(stories_from_records(records), (("event", ("direct",) * 3),))


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
