from __future__ import annotations

import dataclasses

import pytest

from backchannel.datasets import FactItem, ItemSet, infer_answer_type
from backchannel.datasets._shape import answer_shape
from backchannel.datasets._text import aliases_overlap, contains_phrase, normalize


def test_valid_item_is_frozen(paris: FactItem) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        paris.question = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": " "}, "question"),
        ({"false_answer": ""}, "false_answer"),
        ({"true_aliases": ("City of Light",)}, "include the true answer"),
        ({"false_aliases": ("Marseille",)}, "include the false answer"),
        ({"answer_type": "colour"}, "answer_type"),
        ({"true_aliases": ["Paris"]}, "tuple"),
        # "the Lyon" normalises to "lyon", the same alias as the false answer
        ({"true_aliases": ("Paris", "the Lyon")}, "shares an alias"),
        ({"false_answer": "PARIS.", "false_aliases": ("PARIS.",)}, "shares an alias"),
    ],
)
def test_item_validation(paris: FactItem, change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(paris, **change)


def test_item_set_rejects_duplicate_ids(paris: FactItem) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ItemSet(source="x", items=(paris, paris))


def test_normalize() -> None:
    assert normalize("The  Eiffel-Tower!") == "eiffel tower"
    assert normalize("Zürich") == "zurich"
    assert normalize("It isn't 1,200 or 3.5") == "it is not 1200 or 3dot5"
    assert contains_phrase("I think it is Paris.", "paris")
    assert not contains_phrase("Parisian cafes", "Paris")
    assert aliases_overlap(["New York City"], ["New York"])
    assert not aliases_overlap(["York"], ["Yorkshire"])


@pytest.mark.parametrize(
    ("answer", "declared", "expected_type", "expected_shape"),
    [
        ("1987", None, "year", "year"),
        ("1987", "date", "year", "year"),
        ("June 5, 1987", "date", "date", "date:dmy"),
        ("March 1990", "date", "date", "date:my"),
        ("12 km", "number", "number", "number:km"),
        ("1,200", "number", "number", "number:"),
        ("five", "number", "number", "number:words"),
        ("Marie Curie", "person", "person", "person"),
        ("1987", "person", "person", "person"),
        ("Warsaw", "place", "place", "place"),
        ("basketball", None, "other", "other"),
    ],
)
def test_answer_types_and_shapes(
    answer: str, declared: str | None, expected_type: str, expected_shape: str
) -> None:
    answer_type = infer_answer_type(answer, declared)
    assert answer_type == expected_type
    assert answer_shape(answer, answer_type) == expected_shape
