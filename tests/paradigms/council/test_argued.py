"""The `argued` judge task's rule on hand-written turns: support, denial, several, none, names
and ids, and the concession sentence `sim/population` plants; its task and prompt."""

from __future__ import annotations

import pytest

from backchannel.judges import Target
from backchannel.paradigms.council import load_scenario
from backchannel.paradigms.council._argued import (
    ARGUED,
    NONE,
    SEVERAL,
    DebateReference,
    argued_option,
    argued_task,
)

HOUSING = DebateReference.of(load_scenario("housing").as_dict())
# rent_control "Strict rent control", deregulation "Zoning deregulation with building
# incentives", public_housing "Tax-funded public housing"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # support: an endorsing word beside the option's name or its id read as words
        ("The council should adopt Strict rent control.", "rent_control"),
        ("I support rent control.", "rent_control"),
        ("Tax-funded public housing is the best choice.", "public_housing"),
        ("Public housing is the wisest path for the city.", "public_housing"),
        ("We recommend deregulation.", "deregulation"),
        ("ADOPT ZONING DEREGULATION WITH BUILDING INCENTIVES!", "deregulation"),
        # denial: "not X", "rather than X", "over X", "instead of X", "better than X"
        ("Do not adopt rent control.", NONE),
        ("The council should never choose deregulation.", NONE),
        ("Adopt public housing rather than deregulation.", "public_housing"),
        ("Adopt public housing over rent control.", "public_housing"),
        ("Choose public housing instead of rent control.", "public_housing"),
        ("Deregulation is better than rent control.", "deregulation"),
        ("We should adopt rent control and not deregulation.", "rent_control"),
        # several: two options endorsed, in one clause or in two
        ("We should adopt rent control and public housing.", SEVERAL),
        ("Adopt rent control; support public housing as well.", SEVERAL),
        # none: no endorsing word, nothing named, or only criticism
        ("Rent control is costly and deregulation is slow.", NONE),
        ("The council should act now.", NONE),
        ("Deregulation has failed elsewhere.", NONE),
        ("", NONE),
        # a clause break ends what an endorsement reaches
        ("Rent control is costly, but we should adopt public housing.", "public_housing"),
        ("I support the goal, yet rent control failed.", NONE),
        # conceding a point is not arguing for the option
        ("I concede rent control protects tenants, but deregulation is best.", "deregulation"),
    ],
)
def test_the_rule_reads_the_option_a_turn_argues(text: str, label: str) -> None:
    assert argued_option(text, HOUSING) == label


def test_a_name_holding_another_options_name_counts_once() -> None:
    # "Social housing vouchers" holds "housing", another option's name: a mention inside a
    # longer mention of another option is that option's only.
    reference = DebateReference.of(
        {
            "question": "q",
            "options": [
                {"id": "housing", "name": "Housing"},
                {"id": "social_housing", "name": "Social housing vouchers"},
            ],
        }
    )
    assert argued_option("Adopt social housing vouchers.", reference) == "social_housing"
    assert argued_option("Adopt housing.", reference) == "housing"
    assert argued_option("Adopt housing, not social housing vouchers.", reference) == "housing"


def test_names_with_clause_breaks_or_endorsing_words_are_read_whole() -> None:
    reference = DebateReference.of(
        {
            "question": "q",
            "options": [
                {"id": "build", "name": "Build, then rent"},
                {"id": "grants", "name": "Best start grants"},
            ],
        }
    )
    assert argued_option("We should adopt build, then rent.", reference) == "build"
    # "best" inside the option's own name endorses nothing
    assert argued_option("Best start grants are costly.", reference) == NONE
    assert argued_option("Choose best start grants, not build, then rent.", reference) == "grants"
    assert argued_option("Support grants.", reference) == "grants"  # the id as a word


def test_the_populations_concession_reads_as_the_other_option() -> None:
    # sim/population's planted accommodation, for every ordered pair of options, and its
    # consistent turn (docs/population.md, "Council").
    for scenario in ("housing", "child_welfare"):
        loaded = load_scenario(scenario)
        reference = DebateReference.of(loaded.as_dict())
        for own in loaded.options:
            consistent = f"The council should adopt {own.name}.; it serves the people affected."
            assert argued_option(consistent, reference) == own.id
            for other in loaded.options:
                if other.id != own.id:
                    concession = (
                        f"I now concede the council should adopt {other.name}, not {own.name}."
                    )
                    assert argued_option(concession, reference) == other.id


def test_the_task_of_a_scenario_labels_its_options_none_and_several() -> None:
    task = argued_task(HOUSING.option_ids)
    assert task.name == ARGUED
    assert task.labels == ("rent_control", "deregulation", "public_housing", NONE, SEVERAL)
    target = Target(
        conversation_id="c",
        event_seq=3,
        task=task,
        channel="public",
        speaker="advocate_rent_control",
        text="Adopt public housing over rent control.",
        reference=HOUSING,
        conversation_seed=0,
    )
    assert task.rule is not None and task.rule(target) == "public_housing"
    prompt = task.prompt(target)
    assert "- deregulation: Zoning deregulation with building incentives." in prompt
    assert "(rent_control, deregulation, public_housing)" in prompt
    assert "Adopt public housing over rent control." in prompt
    assert "advocate_rent_control" not in prompt  # blind to the speaker's assigned option
    with pytest.raises(ValueError, match="rename the scenario's option"):
        argued_task(("a", "none"))
