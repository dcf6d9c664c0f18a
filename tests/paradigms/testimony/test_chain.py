"""State chains extracted from hand-picked Hi-ToM stories."""

from __future__ import annotations

import pytest

from backchannel.paradigms.testimony import StoryError, extract_chain, stories_from_records
from backchannel.paradigms.testimony._hitom import parse_choices

from ._stories import EGGPLANT, LETTUCE, LETTUCE_CHOICES, ONION, PEAS, SPINACH


def containers(story: str) -> list[str]:
    return [n.container for n in extract_chain(story, "s").nodes]


def test_lettuce_chain_has_three_moves_and_returns_to_its_start() -> None:
    chain = extract_chain(LETTUCE, "hitom-0000")
    assert chain.target == "lettuce"
    assert containers(LETTUCE) == ["green_drawer", "green_bathtub", "blue_pantry", "green_drawer"]
    assert [n.actor for n in chain.nodes] == [None, "Avery", "Charlotte", "Owen"]
    assert chain.roles == ("Avery", "Charlotte", "Isabella", "Elizabeth", "Owen")
    assert (chain.moves, chain.endpoint, chain.decoy) == (3, "green_drawer", "blue_pantry")


def test_a_container_visited_twice_is_two_nodes() -> None:
    chain = extract_chain(EGGPLANT, "hitom-0002")
    assert [n.container for n in chain.nodes] == [
        "green_envelope",
        "green_bathtub",
        "blue_cupboard",
        "green_basket",
        "green_envelope",
    ]
    assert chain.nodes[0] != chain.nodes[4]  # same container, different (unmoved / moved) node
    assert chain.actor(4) == "Noah"


def test_only_the_chapter_one_object_is_followed() -> None:
    chain = extract_chain(PEAS, "hitom-0800")
    assert chain.target == "peas"
    assert containers(PEAS) == ["blue_suitcase", "red_crate", "green_bottle"]
    assert chain.moves == 2  # claims and the potato's moves are not moves of the peas


def test_moves_of_the_object_in_later_chapters_continue_the_chain() -> None:
    chain = extract_chain(ONION, "hitom-0201")
    assert containers(ONION) == [
        "blue_treasure_chest",
        "green_treasure_chest",
        "red_drawer",
        "blue_bottle",
    ]
    assert [chain.actor(t) for t in (1, 2, 3)] == ["Charlotte", "Owen", "Owen"]


def test_a_move_into_the_same_container_is_refused() -> None:
    with pytest.raises(StoryError, match="where it was"):
        extract_chain(SPINACH, "hitom-0003")


def test_a_story_without_numbered_lines_is_refused() -> None:
    with pytest.raises(StoryError, match="no numbered lines"):
        extract_chain("Read the following story.\n", "x")


def test_records_of_one_story_become_one_story_named_after_its_smallest_sample() -> None:
    header = "Read the following story and answer the multiple-choice question.\n"
    records = [
        {"story": LETTUCE, "sample_id": 40, "choices": LETTUCE_CHOICES},
        {"story": header + LETTUCE + "***\n", "sample_id": 7, "choices": LETTUCE_CHOICES},
    ]
    (story,) = stories_from_records(records)
    assert story.story_id == "hitom-0007"
    assert story.containers == parse_choices(LETTUCE_CHOICES)
    assert len(story.containers) == 15
    assert containers(story.text) == containers(LETTUCE)
