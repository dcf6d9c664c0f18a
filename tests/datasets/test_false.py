from __future__ import annotations

import dataclasses

from backchannel.datasets import Candidate, assign_false_answers


def _cand(
    item_id: str,
    question: str,
    truth: str,
    aliases: tuple[str, ...] = (),
    *,
    answer_type: str = "person",
    pool: str = "author",
    false_answer: str | None = None,
) -> Candidate:
    return Candidate(
        item_id=item_id,
        dataset="test",
        question=question,
        true_answer=truth,
        true_aliases=(truth, *aliases),
        relation=pool,
        answer_type=answer_type,
        pool=pool,
        false_answer=false_answer,
    )


def test_only_valid_donor_is_chosen() -> None:
    # Item a can take: b shares alias "Sam Clemens" (no), c is named in the question (no),
    # d is in another pool (no), e is a year not a person (no); only f is valid.
    cands = [
        _cand(
            "a",
            "Who wrote the book Mark Twain reviewed with Jane Austen?",
            "Mark Twain",
            ("Samuel Clemens", "Sam Clemens"),
        ),
        _cand("b", "q b", "S. Clemens", ("Sam Clemens",)),
        _cand("c", "q c", "Jane Austen"),
        _cand("d", "q d", "Leo Tolstoy", pool="director"),
        _cand("e", "q e", "1850", answer_type="year"),
        _cand("f", "q f", "Charles Dickens", ("Boz",)),
    ]
    items, dropped = assign_false_answers(cands, seed=3)
    by_id = {item.item_id: item for item in items}
    assert by_id["a"].false_answer == "Charles Dickens"
    assert by_id["a"].false_aliases == ("Charles Dickens", "Boz")
    # d is alone in its pool and e alone in its shape: no donor, so they are dropped and counted
    assert sorted(d.item_id for d in dropped) == ["d", "e"]
    reasons = {d.item_id: d.reason for d in dropped}
    assert reasons["d"].startswith("no other item of its pool 'director' has an answer usable")
    assert "of shape year" in reasons["e"]


def test_contained_alias_is_not_a_false_answer() -> None:
    # "New York" sits inside "New York City": a judge could not tell them apart, so no donor.
    cands = [
        _cand("a", "Where is X?", "New York City", answer_type="place", pool="p"),
        _cand("b", "Where is Y?", "New York", answer_type="place", pool="p"),
    ]
    items, dropped = assign_false_answers(cands)
    assert items == []
    assert [d.item_id for d in dropped] == ["a", "b"]


def test_number_shape_requires_same_unit() -> None:
    cands = [
        _cand("a", "How long?", "12 km", answer_type="number", pool="n"),
        _cand("b", "How heavy?", "40 kg", answer_type="number", pool="n"),
        _cand("c", "How far?", "7 km", answer_type="number", pool="n"),
    ]
    items, dropped = assign_false_answers(cands)
    assert {i.item_id: i.false_answer for i in items} == {"a": "7 km", "c": "12 km"}
    assert [d.item_id for d in dropped] == ["b"]
    assert "of shape number:kg" in dropped[0].reason


def test_own_false_answer_is_checked() -> None:
    cands = [
        _cand(
            "ok",
            "Complete: Danielle Darrieux speaks ___",
            "French",
            answer_type="other",
            false_answer="English",
        ),
        _cand(
            "same", "Complete: X speaks ___", "French", answer_type="other", false_answer="french"
        ),
    ]
    items, dropped = assign_false_answers(cands)
    assert [(i.item_id, i.false_answer) for i in items] == [("ok", "English")]
    assert [d.item_id for d in dropped] == ["same"]
    assert dropped[0].reason == "its false answer 'french' shares an alias with the true answer"


def test_every_rule_a_false_answer_breaks_is_named() -> None:
    cands = [
        _cand("shape", "How far?", "12 km", answer_type="number", false_answer="40 kg"),
        _cand("named", "Is it Rome or Paris?", "Rome", answer_type="place", false_answer="Paris"),
        # what the loaders make of an answer without letters or digits: no aliases left
        dataclasses.replace(
            _cand("blank", "What is X?", "!!!", answer_type="other"), true_aliases=()
        ),
        _cand("kept", "What is Y?", "Berlin", answer_type="place", false_answer="Madrid"),
    ]
    items, dropped = assign_false_answers(cands)
    assert [i.item_id for i in items] == ["kept"]
    assert {d.item_id: d.reason for d in dropped} == {
        "shape": "its false answer '40 kg' is not of the true answer's kind (shape number:kg, the "
        "true answer's number:km: a year must stand for a year, a number for a number in the "
        "same unit)",
        "named": "its false answer 'Paris' is named in the question ('Paris')",
        "blank": "its true answer '!!!' has no letters or digits to match",
    }


def test_deterministic_given_seed_and_varies_with_seed() -> None:
    cands = [_cand(f"i{n}", f"question {n}?", f"Person Number{n}") for n in range(40)]
    first, _ = assign_false_answers(cands, seed=7)
    again, _ = assign_false_answers(cands, seed=7)
    other, _ = assign_false_answers(cands, seed=8)
    assert first == again
    assert [i.false_answer for i in first] != [i.false_answer for i in other]
    assert all(i.false_answer != i.true_answer for i in first)
