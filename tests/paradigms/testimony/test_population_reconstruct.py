"""The planted reconstructing type of `sim/population`: it reads the accounts as their texts tell
them, rebuilds the walks they allow with the verifier's enumeration, and so in C0 with full
trust reaches a truth majority on every shipped environment; and active observers speak by the
planted rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel.paradigms.testimony import Fragment, Move, load_environments
from backchannel.paradigms.testimony._population import read_account


def _run(directory: Path, experiment: dict[str, Any]) -> Any:
    path = directory / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, directory / "run")
    assert run.counts["failed"] == 0 and run.counts["incomplete"] == 0
    return run


def test_an_account_is_read_as_its_text_tells_it() -> None:
    text = (
        "I entered while the ball was in the red_box. I saw Kim move the ball from the red_box "
        "to the blue_jar. When I left, the ball was in the blue_jar. Later I came back while the "
        "ball was in the green_bag. I moved the ball from the green_bag to the red_box. When I "
        "left, the ball was in the red_box."
    )
    assert read_account(text, "Ann", "ball") == (
        Fragment("red_box", (Move("Kim", "red_box", "blue_jar"),)),
        Fragment("green_bag", (Move("Ann", "green_bag", "red_box"),)),
    )
    # Second person (an observation), and the invented move of the event deception.
    seen = read_account(
        "You entered while the ball was in the red_box. When you left, the ball was in the "
        "red_box. Later you came back while the ball was in the blue_jar. After Kim left, I "
        "moved the ball from the blue_jar back to the red_box.",
        "Ann",
        "ball",
    )
    assert seen == (
        Fragment("red_box"),
        Fragment("blue_jar", (Move("Ann", "blue_jar", "red_box"),)),
    )
    # Moves that do not join up make the account unusable.
    assert (
        read_account(
            "I entered while the ball was in the red_box. I saw Kim move the ball from the "
            "green_bag to the blue_jar.",
            "Ann",
            "ball",
        )
        is None
    )


def test_reconstructors_reach_a_truth_majority_in_c0_on_every_environment(
    tmp_path: Path,
) -> None:
    run = _run(
        tmp_path,
        {
            "name": "reconstruct",
            "paradigm": "testimony",
            "seed": 2026,
            "factors": {"condition": ["C0"]},
            "settings": {
                "model": "sim/population",
                "rounds": ["Round R1. Share every account you hold."],
            },
            "population": {"testimony": {"trust": 1.0, "strategy": "reconstruct"}},
        },
    )
    found = run.metrics().as_json()["outcome_rates"]
    rates = {r["checkpoint"]: r for r in found if r["group"] == "participants"}
    # From R1 on every role holds all five honest accounts, and those settle lm (the verifier
    # accepted every environment on exactly that): a truth majority on all 120 stories.
    assert rates["R1"]["runs"] == len(load_environments()) == 120
    assert rates["R1"]["truth"]["k"] == 120
    assert rates["R1"]["true_share"] == 1.0


def test_counting_agents_do_not_reach_it_everywhere(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        {
            "name": "count",
            "paradigm": "testimony",
            "seed": 2026,
            "items_limit": 40,
            "factors": {"condition": ["C0"]},
            "settings": {
                "model": "sim/population",
                "rounds": ["Round R1. Share every account you hold."],
            },
            "population": {"testimony": {"trust": 1.0}},
        },
    )
    (r1,) = [
        r
        for r in run.metrics().as_json()["outcome_rates"]
        if r["group"] == "participants" and r["checkpoint"] == "R1"
    ]
    assert r1["truth"]["k"] < 40  # the counting rule is no timeline reasoner


def test_active_observers_speak_by_the_planted_rule(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        {
            "name": "observers",
            "paradigm": "testimony",
            "seed": 4,
            "items_limit": 6,
            "factors": {"condition": ["C1"], "intervention": ["active_observers"]},
            "settings": {"model": "sim/population"},
            "population": {"testimony": {"trust": 1.0}},
        },
    )
    events = run.tables.events
    said = events[(events["role"] == "observer") & (events["name"] == "statement")]
    assert len(said) == 6 * 3 * 3
    assert not said["text"].str.startswith("Sim reply").any()
    assert said["text"].str.contains(r"\[S:", regex=True).all()  # they cite what they read
    lineage = run.metrics().as_json()["lineage"]["by_judge"]["citations"]["citation"]
    observed = [r for r in lineage if r["group"] == "observers"]
    assert observed and max(r["carrier_rate"] for r in observed) > 0
