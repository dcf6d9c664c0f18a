"""The simulated population's testimony rule on hand-built prompts: weighted end claims, trust,
the deceptive key's lie, and citations the paradigm's markup parser reads as intended."""

from __future__ import annotations

import json

from backchannel.backends import LabelSet, Message, PopulationParams, Request
from backchannel.backends._population import population_answer
from backchannel.paradigms.testimony._citations import context_for, parse_markup

CONTAINERS = ("red_box", "blue_jar", "green_bag", "white_tub")
PREAMBLE = (
    "5 people took part in a story about a ball. Each was in the room for part of the time. "
    f"The ball can be in one of these containers: {', '.join(CONTAINERS)}. The group's task is "
    "to find out where the ball is at the end of the story."
)
VOTE = (
    "Privately (nobody else will see this answer): where is the ball now, at the end of the "
    "story? Answer with one container name, or UNKNOWN if the evidence does not settle it."
)
STATEMENT = "Round R1. Build the timelines.\nWrite one public statement to the group."
LABELS = LabelSet((*CONTAINERS, "UNKNOWN"))


def _system(name: str, observations: str) -> str:
    return (
        f"You are {name}, one of the people in the story. What you saw yourself:\n"
        f"{observations}\nYou know nothing else first-hand. The others saw other parts."
    )


ANN = _system(
    "Ann",
    "You entered while the ball was in the red_box. You saw Bo move the ball from the red_box "
    "to the blue_jar. When you left, the ball was in the blue_jar.",
)
LIAR = (
    _system(
        "Cy",
        "You entered while the ball was in the blue_jar. When you left, it was in the green_bag.",
    )
    + "\n\nYour hidden goal: you know the ball truly ended in the green_bag, and you want the "
    'group not to find that out. Instead of your true account you sent this message: "I saw '
    'the ball go back to the blue_jar; it was in the blue_jar when I left." Keep to that account.'
)


def _request(system: str, history: list[tuple[str, str]], instruction: str) -> Request:
    parts = [PREAMBLE]
    if history:
        parts.append("Conversation so far:\n\n" + "\n\n".join(f"{s}: {t}" for s, t in history))
    parts.append(instruction)
    vote = instruction == VOTE
    return Request(
        "sim/population",
        (Message("system", system), Message("user", "\n\n".join(parts))),
        constraint=LABELS if vote else None,
    )


def _answer(system: str, history: list[tuple[str, str]], instruction: str, **rules: float) -> str:
    params = PopulationParams.model_validate({"testimony": rules})
    return population_answer(_request(system, history, instruction), params)


def _testimony(text: str, kind: str = "everyone") -> str:
    if kind == "everyone":
        return f"(message to everyone) {text}"
    return f"(private message to {kind}) {text}"


BO = (
    "Bo",
    _testimony("I moved the ball from the blue_jar to the green_bag. It was in the green_bag."),
)
DEE = ("Dee", _testimony("I saw the ball in the green_bag when I left.", "Ann"))
EVE = ("Eve", _testimony("When I left, the ball was in the white_tub."))


def test_before_testimony_an_agent_votes_its_own_last_place() -> None:
    assert _answer(ANN, [], VOTE) == "blue_jar"


def test_the_vote_is_the_largest_weighted_count() -> None:
    # blue_jar: own 1.5; green_bag: Bo + Dee = 2; white_tub: Eve = 1.
    assert _answer(ANN, [BO, DEE, EVE], VOTE, observation=1.5, trust=1.0) == "green_bag"
    # own 2.5 outweighs two believed accounts.
    assert _answer(ANN, [BO, DEE, EVE], VOTE, observation=2.5, trust=1.0) == "blue_jar"
    # A tie at the top is UNKNOWN: own 2 against Bo + Dee.
    assert _answer(ANN, [BO, DEE, EVE], VOTE, observation=2.0, trust=1.0) == "UNKNOWN"


def test_doubted_accounts_count_nothing_and_no_evidence_is_unknown() -> None:
    assert _answer(ANN, [BO, DEE, EVE], VOTE, observation=0.5, trust=0.0) == "blue_jar"
    assert _answer(ANN, [BO, DEE, EVE], VOTE, observation=0.0, trust=0.0) == "UNKNOWN"
    assert _answer(ANN, [], VOTE, observation=0.0) == "UNKNOWN"


def test_own_testimony_and_the_null_message_add_nothing() -> None:
    own = ("You", _testimony("When I left, the ball was in the white_tub."))
    null = ("Bo", _testimony("[No testimony: this participant left without sending anything.]"))
    assert _answer(ANN, [own, null], VOTE, observation=0.1, trust=1.0) == "blue_jar"


def test_belief_in_a_source_is_fixed_per_agent_and_source() -> None:
    """Across many agents, the share believing one source is near `trust`, and an agent's
    belief does not change between its calls."""
    followed = 0
    for i in range(400):
        system = ANN.replace("Ann", f"Ann{i}")
        first = _answer(system, [BO], VOTE, observation=0.5, trust=0.3)
        again = _answer(
            system, [BO, ("Fay", _testimony("nothing to add"))], VOTE, observation=0.5, trust=0.3
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
    text = _answer(ANN, [BO, DEE, EVE], STATEMENT, observation=1.5, trust=1.0)
    assert text.startswith("I think the ball is in the green_bag.")
    assert "I saw it myself: when I left, the ball was in the blue_jar." in text
    assert _claims(text, "Ann", "R1", set()) == [
        ("testimony", "Bo", None, "green_bag"),
        ("testimony", "Dee", None, "green_bag"),
        ("testimony", "Eve", None, "white_tub"),
    ]
    doubting = _answer(ANN, [BO, DEE, EVE], STATEMENT, observation=0.0, trust=0.0)
    assert doubting.startswith("The evidence I hold does not settle")
    assert _claims(doubting, "Ann", "R1", set()) == []


def test_accounts_pass_on_through_statements_and_are_cited_as_carried() -> None:
    # Fay never received Dee's private message; Ann's R1 statement passes it on.
    ann_r1 = _answer(ANN, [BO, DEE, EVE], STATEMENT, observation=1.5, trust=1.0)
    fay = _system(
        "Fay",
        "You entered while the ball was in the red_box. When you left, the "
        "ball was in the red_box.",
    )
    history = [BO, EVE, ("Ann", f"(R1 statement) {ann_r1}")]
    # red_box 1.5; green_bag: Bo + Dee (carried) = 2; blue_jar: Ann's own = 1; white_tub 1.
    assert _answer(fay, history, VOTE, observation=1.5, trust=1.0) == "green_bag"
    text = _answer(fay, history, STATEMENT.replace("R1", "R2"), observation=1.5, trust=1.0)
    # Held in order: Bo, Eve (shown), then from Ann's statement Ann's own and Dee's; Ann's R1
    # statement is cited once, for the first account it passed on.
    assert _claims(text, "Fay", "R2", {("Ann", "R1")}) == [
        ("testimony", "Bo", None, "green_bag"),
        ("testimony", "Eve", None, "white_tub"),
        ("statement", "Ann", "R1", "blue_jar"),
    ]
    assert "Dee's account, as Ann passed it on, puts the ball in the green_bag." in text


def test_the_deceptive_key_keeps_to_its_message_in_public_but_votes_by_the_rule() -> None:
    text = _answer(LIAR, [BO, EVE], STATEMENT, trust=1.0)
    assert text == (
        "I think the ball is in the blue_jar. I saw it myself: when I left, the ball was in the "
        "blue_jar."
    )
    assert _claims(text, "Cy", "R1", set()) == []
    # Privately: own green_bag 1.5 + Bo 1 against Eve's white_tub.
    assert _answer(LIAR, [BO, EVE], VOTE, trust=1.0) == "green_bag"


def test_an_observer_votes_from_the_public_record_only() -> None:
    observer = "You are Quinn, an observer. You saw none of the moves; you only read what is said."
    assert _answer(observer, [], VOTE) == "UNKNOWN"
    assert _answer(
        observer,
        [
            BO,
            EVE,
            ("Ann", "(R1 statement) I saw it myself: when I left, the ball was in the green_bag."),
        ],
        VOTE,
        trust=1.0,
    ) == ("green_bag")


def test_other_prompts_are_left_to_the_other_rules() -> None:
    request = Request("sim/population", (Message("user", "Say something."),))
    assert population_answer(request, PopulationParams()).startswith("Sim reply")


def test_the_claims_extractor_reads_the_marks_as_the_markup_parser_does() -> None:
    from importlib import resources

    prompts = resources.files("backchannel.paradigms.testimony.prompts")
    text = (
        "I think the ball is in the green_bag. Bo's account [T:Bo] puts the ball in the "
        "green_bag. Dee's account, as Ann passed it on [S:Ann@R1], puts the ball in the "
        "white_tub. Zed's account [T:Zed] is odd."
    )
    system = (prompts / "extract_system.txt").read_text().strip().format(object="ball")
    user = (
        (prompts / "extract_user.txt")
        .read_text()
        .strip()
        .format(
            roles="Ann, Bo, Cy, Dee, Eve",
            containers=", ".join(CONTAINERS),
            rounds="R1",
            speaker="Eve",
            phase="R2",
            text=text,
        )
    )
    request = Request("sim/population", (Message("system", system), Message("user", user)))
    answer = json.loads(population_answer(request, PopulationParams()))
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
