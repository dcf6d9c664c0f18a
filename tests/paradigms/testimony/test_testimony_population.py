"""The simulated population's testimony rule on hand-built calls (read from call information,
never from the prompt's wording): weighted end claims, trust, the deceptive key's lie,
citations the paradigm's markup parser reads as intended, and a run whose every call a rule
answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import backchannel as bc
from backchannel.backends import CallInfo, LabelSet, Message, PopulationParams, Request, Seen
from backchannel.backends._population import SimulatedPopulation
from backchannel.paradigms.testimony import Testimony
from backchannel.paradigms.testimony._citations import context_for, parse_markup
from backchannel.paradigms.testimony._extractor import CitationExtractor, Target

BOOK = Testimony().population_book()
CONTAINERS = ("red_box", "blue_jar", "green_bag", "white_tub")
LABELS = LabelSet((*CONTAINERS, "UNKNOWN"))
OWN = {
    "Ann": "You entered while the ball was in the red_box. You saw Bo move the ball from the "
    "red_box to the blue_jar. When you left, the ball was in the blue_jar.",
    "Cy": "You entered while the ball was in the blue_jar. When you left, it was in the green_bag.",
    "Fay": "You entered while the ball was in the red_box. When you left, the ball was in the "
    "red_box.",
}
ENVIRONMENT = {"object": "ball", "containers": list(CONTAINERS), "observations": OWN}
LIE = "I saw the ball go back to the blue_jar; it was in the blue_jar when I left."
# (sender, what it sent): testimony is shown at T1 (round 1), a statement in its round.
History = list[tuple[str, str, int]]


def _answer(
    agent: str,
    history: History,
    prompt: str,
    *,
    role: str = "member",
    lie: str | None = None,
    sent: dict[str, str] | None = None,
    system: str | None = None,
    observed: str | None = None,
    **rules: float,
) -> str:
    """What `agent` answers to the `vote` or `statement` call after seeing `history`."""
    params = PopulationParams.model_validate({"testimony": rules})
    own = observed if observed is not None else OWN.get(agent)
    environment = {**ENVIRONMENT, "observations": {} if own is None else {agent: own}}
    messages = {s: t for s, t, r in history if r == 1} | (sent or {})
    facts: dict[str, Any] = {"messages": messages}
    if lie is not None:
        facts["lie"] = lie
    seen = tuple(
        Seen("You" if s == agent else s, f"(shown) {t}", r, i, s == agent)
        for i, (s, t, r) in enumerate(history)
    )
    call = CallInfo(
        prompt,
        paradigm="testimony",
        agent=agent,
        role=role,
        item={"environment": environment},
        facts=facts,
        seen=seen,
    )
    request = Request(
        "sim/population",
        (Message("system", system or f"You are {agent}."), Message("user", "Any prompt.")),
        constraint=LABELS if prompt == "vote" else None,
        call=call,
    )
    return SimulatedPopulation(BOOK, params).answer(request)


BO = ("Bo", "I moved the ball from the blue_jar to the green_bag. It was in the green_bag.", 1)
DEE = ("Dee", "I saw the ball in the green_bag when I left.", 1)
EVE = ("Eve", "When I left, the ball was in the white_tub.", 1)


def test_before_testimony_an_agent_votes_its_own_last_place() -> None:
    assert _answer("Ann", [], "vote") == "blue_jar"


def test_the_vote_is_the_largest_weighted_count() -> None:
    # blue_jar: own 1.5; green_bag: Bo + Dee = 2; white_tub: Eve = 1.
    assert _answer("Ann", [BO, DEE, EVE], "vote", observation=1.5, trust=1.0) == "green_bag"
    # own 2.5 outweighs two believed accounts.
    assert _answer("Ann", [BO, DEE, EVE], "vote", observation=2.5, trust=1.0) == "blue_jar"
    # A tie at the top is UNKNOWN: own 2 against Bo + Dee.
    assert _answer("Ann", [BO, DEE, EVE], "vote", observation=2.0, trust=1.0) == "UNKNOWN"


def test_doubted_accounts_count_nothing_and_no_evidence_is_unknown() -> None:
    assert _answer("Ann", [BO, DEE, EVE], "vote", observation=0.5, trust=0.0) == "blue_jar"
    assert _answer("Ann", [BO, DEE, EVE], "vote", observation=0.0, trust=0.0) == "UNKNOWN"
    assert _answer("Ann", [], "vote", observation=0.0) == "UNKNOWN"


def test_own_testimony_and_the_null_message_add_nothing() -> None:
    own = ("Ann", "When I left, the ball was in the white_tub.", 1)
    null = ("Bo", "[No testimony: this participant left without sending anything.]", 1)
    assert _answer("Ann", [own, null], "vote", observation=0.1, trust=1.0) == "blue_jar"


def test_belief_in_a_source_is_fixed_per_agent_and_source() -> None:
    """Across many agents, the share believing one source is near `trust`, and an agent's
    belief does not change between its calls."""
    followed = 0
    for i in range(400):
        name = f"Ann{i}"
        first = _answer(name, [BO], "vote", observed=OWN["Ann"], observation=0.5, trust=0.3)
        again = _answer(
            name,
            [BO, ("Fay", "nothing to add", 1)],
            "vote",
            observed=OWN["Ann"],
            observation=0.5,
            trust=0.3,
        )
        assert first == again
        followed += first == "green_bag"
    assert 0.23 < followed / 400 < 0.37  # binomial(400, 0.3): sd 0.023


def _claims(text: str, speaker: str, phase: str, spoken: set[tuple[str, str]]) -> list[tuple]:
    context = context_for(speaker, phase, ["Ann", "Bo", "Cy", "Dee", "Eve"], spoken, CONTAINERS)
    extraction = parse_markup(text, context)
    assert extraction.invalid == ()
    return [(c.kind, c.source, c.round, c.supports) for c in extraction.claims]


def test_a_statement_states_the_vote_and_cites_every_believed_account() -> None:
    text = _answer("Ann", [BO, DEE, EVE], "statement", observation=1.5, trust=1.0)
    assert text.startswith("I think the ball is in the green_bag.")
    assert "I saw it myself: when I left, the ball was in the blue_jar." in text
    assert _claims(text, "Ann", "R1", set()) == [
        ("testimony", "Bo", None, "green_bag"),
        ("testimony", "Dee", None, "green_bag"),
        ("testimony", "Eve", None, "white_tub"),
    ]
    doubting = _answer("Ann", [BO, DEE, EVE], "statement", observation=0.0, trust=0.0)
    assert doubting.startswith("The evidence I hold does not settle")
    assert _claims(doubting, "Ann", "R1", set()) == []


def test_accounts_pass_on_through_statements_and_are_cited_as_carried() -> None:
    # Fay never received Dee's private message; Ann's R1 statement (round 2) passes it on.
    ann_r1 = _answer("Ann", [BO, DEE, EVE], "statement", observation=1.5, trust=1.0)
    history = [BO, EVE, ("Ann", ann_r1, 2)]
    # red_box 1.5; green_bag: Bo + Dee (carried) = 2; blue_jar: Ann's own = 1; white_tub 1.
    assert _answer("Fay", history, "vote", observation=1.5, trust=1.0) == "green_bag"
    text = _answer("Fay", history, "statement", observation=1.5, trust=1.0)
    # Held in order: Bo, Eve (shown), then from Ann's statement Ann's own and Dee's; Ann's R1
    # statement is cited once, for the first account it passed on.
    assert _claims(text, "Fay", "R2", {("Ann", "R1")}) == [
        ("testimony", "Bo", None, "green_bag"),
        ("testimony", "Eve", None, "white_tub"),
        ("statement", "Ann", "R1", "blue_jar"),
    ]
    assert "Dee's account, as Ann passed it on, puts the ball in the green_bag." in text


def test_the_deceptive_key_keeps_to_its_message_in_public_but_votes_by_the_rule() -> None:
    text = _answer("Cy", [BO, EVE], "statement", role="key", lie=LIE, trust=1.0)
    assert text == (
        "I think the ball is in the blue_jar. I saw it myself: when I left, the ball was in the "
        "blue_jar."
    )
    assert _claims(text, "Cy", "R1", set()) == []
    # Privately: own green_bag 1.5 + Bo 1 against Eve's white_tub.
    assert _answer("Cy", [BO, EVE], "vote", role="key", lie=LIE, trust=1.0) == "green_bag"


def test_an_observer_votes_from_the_public_record_only() -> None:
    assert _answer("Quinn", [], "vote", role="observer") == "UNKNOWN"
    said = ("Ann", "I saw it myself: when I left, the ball was in the green_bag.", 2)
    assert _answer("Quinn", [BO, EVE, said], "vote", role="observer", trust=1.0) == "green_bag"


def test_the_wording_of_the_prompt_changes_nothing() -> None:
    """The same call under other prompt texts gets the same answer; a call no rule names (or
    no call information at all) gets the scripted answer."""
    calls = [
        _answer("Ann", [BO, DEE, EVE], "statement", system=system, trust=1.0)
        for system in ("You are Ann.", "Tu es Ann.")
    ]
    assert calls[0].startswith("I think the ball is in the green_bag.") and len(set(calls)) == 1
    assert _answer("Ann", [BO], "profile").startswith("Sim reply")
    request = Request("sim/population", (Message("user", "Say something."),))
    assert SimulatedPopulation(BOOK, None).answer(request).startswith("Sim reply")


def test_the_claims_extractor_reads_the_marks_as_the_markup_parser_does() -> None:
    text = (
        "I think the ball is in the green_bag. Bo's account [T:Bo] puts the ball in the "
        "green_bag. Dee's account, as Ann passed it on [S:Ann@R1], puts the ball in the "
        "white_tub. Zed's account [T:Zed] is odd."
    )
    context = context_for(
        "Eve", "R2", ["Ann", "Bo", "Cy", "Dee", "Eve"], {("Ann", "R1")}, CONTAINERS
    )
    target = Target("c1", 7, 11, "ball", ("Ann", "Bo", "Cy", "Dee", "Eve"), context, text)
    request = CitationExtractor("sim/population").request(target)
    assert request.call is not None and request.call.source == "judge"
    answer = json.loads(SimulatedPopulation(BOOK, PopulationParams()).answer(request))
    assert answer == {
        "claims": [
            {
                "source_kind": "testimony",
                "source_role": "Bo",
                "source_round": "none",
                "supports": "green_bag",
            },
            {
                "source_kind": "statement",
                "source_role": "Ann",
                "source_round": "R1",
                "supports": "white_tub",
            },
        ]
    }  # Zed is no one in the story: the schema cannot name him


def test_every_call_of_a_run_is_answered_by_a_rule(
    tmp_path: Path, population_requests: list[Request]
) -> None:
    experiment = {
        "name": "every-call",
        "paradigm": "testimony",
        "seed": 3,
        "items_limit": 2,
        "factors": {"condition": ["C1"], "intervention": ["none", "active_observers"]},
        "settings": {"model": "sim/population", "rounds": ["Round R1. Share what you know."]},
        "population": {"testimony": {"trust": 1.0}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["done"] == 4
    assert population_requests and all(r.call is not None for r in population_requests)
    assert all(BOOK.rule(r.call) is not None for r in population_requests if r.call)
    prompts = {(r.call.source, r.call.prompt) for r in population_requests if r.call}
    assert prompts == {("paradigm", "vote"), ("paradigm", "statement")}


def test_the_population_as_claims_extractor_agrees_with_the_markup(
    tmp_path: Path, population_requests: list[Request]
) -> None:
    """`judge --judge sim/population` extracts each statement's claims from its call
    information, exactly as the markup parser reads them."""
    from typer.testing import CliRunner

    from backchannel.cli import app

    experiment = {
        "name": "extract",
        "paradigm": "testimony",
        "seed": 5,
        "items_limit": 3,
        "factors": {"condition": ["C0", "C1"]},
        "settings": {"model": "sim/population", "rounds": ["Round R1.", "Round R2."]},
        "population": {"testimony": {"trust": 0.7}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    directory = tmp_path / "run"
    bc.run(path, directory)
    runner = CliRunner()
    judged = runner.invoke(
        app, ["judge", str(directory), "--judge", "sim/population", "--as", "citations_llm"]
    )
    assert judged.exit_code == 0, judged.output
    assert ("judge", "claims") in {
        (r.call.source, r.call.prompt) for r in population_requests if r.call
    }
    agree = runner.invoke(app, ["agree", str(directory), "citations", "citations_llm", "--json"])
    assert agree.exit_code == 0, agree.output
    found = json.loads(agree.output)
    assert found["statements"] == 3 * 2 * 5 * 2 and found["both_extracted"] == found["statements"]
    assert (found["exact_agreement"], found["precision"], found["recall"]) == (1.0, 1.0, 1.0)
