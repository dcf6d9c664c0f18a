"""Citation markup: claims, their supported endpoints, and every kind of citation that does not
count (malformed, unknown, self, same or later round, repeated)."""

from __future__ import annotations

import pytest

from backchannel.paradigms.testimony._citations import (
    Claim,
    Extraction,
    Invalid,
    context_for,
    parse_markup,
    supported_endpoint,
)

CONTAINERS = ("red_box", "blue_box", "green_crate")
SENDERS = ("Kim", "Sam", "Ann", "Bob", "Cal")
SPOKEN = {(n, r) for n in ("Kim", "Sam", "Ann", "Bob", "Cal") for r in ("R1", "R2", "R3")}


def parse(text: str, speaker: str = "Ann", phase: str = "R2") -> Extraction:
    return parse_markup(text, context_for(speaker, phase, SENDERS, SPOKEN, CONTAINERS))


def test_testimony_and_statement_citations_are_claims_with_their_endpoint() -> None:
    found = parse(
        "Kim says the apple went from the red_box to the blue box [T:Kim]. "
        "Bob agreed in the first round [S:Bob@R1]! Sam saw nothing like it [T:Sam]"
    )
    assert found.claims == (
        Claim("testimony", "Kim", None, "blue_box"),  # the last container of its sentence
        Claim("statement", "Bob", "R1", None),  # its sentence names no container
        Claim("testimony", "Sam", None, None),
    )
    assert found.invalid == ()


def test_two_citations_in_one_sentence_are_two_claims() -> None:
    found = parse("Both say green crate [T:Kim] [S:Cal@R1].")
    assert [c.key for c in found.claims] == [("testimony", "Kim", None), ("statement", "Cal", "R1")]
    assert {c.supports for c in found.claims} == {"green_crate"}


@pytest.mark.parametrize(
    "mark",
    ["[T:]", "[S:Bob]", "[S:Bob@]", "[S:Bob@X1]", "[S:Bob@R0]", "[T:Kim Sam]", "[T:Kim"],
)
def test_malformed_citations_are_counted_not_claims(mark: str) -> None:
    found = parse(f"Something about the red_box {mark} here.")
    assert found.claims == ()
    assert [i.reason for i in found.invalid] == ["malformed"]


def test_repeated_citation_is_one_claim() -> None:
    found = parse("In the red_box [T:Kim]. Again [T:Kim] and [S:Bob@R1], [S:Bob@R1].")
    assert [c.key for c in found.claims] == [("testimony", "Kim", None), ("statement", "Bob", "R1")]
    assert found.invalid == (Invalid("[T:Kim]", "repeated"), Invalid("[S:Bob@R1]", "repeated"))


def test_self_same_round_later_round_and_unknown_citations_do_not_count() -> None:
    found = parse(
        "Me earlier [S:Ann@R1]. Same round [S:Bob@R2]. Later [S:Cal@R3]. Nobody [T:Zed]. "
        "Unspoken [S:Zed@R1]. Observer round before mine [S:Bob@O1].",
        phase="R2",
    )
    assert found.claims == ()
    assert [i.reason for i in found.invalid] == [
        "self",
        "later_round",
        "later_round",
        "unknown_source",
        "unknown_source",
        "unknown_source",  # O1 precedes R2, but nobody spoke in O1
    ]


def test_own_testimony_counts_and_an_observer_cites_the_round_before_it() -> None:
    assert parse("As I wrote [T:Ann].").claims == (Claim("testimony", "Ann", None, None),)
    spoken = SPOKEN | {("Quinn", "O1")}
    context = context_for("Bob", "R2", SENDERS, spoken, CONTAINERS)
    assert parse_markup("Quinn noted [S:Quinn@O1].", context).claims[0].round == "O1"
    # an observer speaking at O1 may cite R1 (stored 2 < 3) but not O1 itself
    observer = context_for("Quinn", "O1", SENDERS, spoken, CONTAINERS)
    found = parse_markup("[S:Bob@R1] [S:Rowan@O1]", observer)
    assert [c.key for c in found.claims] == [("statement", "Bob", "R1")]
    assert [i.reason for i in found.invalid] == ["later_round"]


def test_label_round_trips_and_is_canonical() -> None:
    found = parse("Blue box [T:Kim] and [T:Kim].")
    again = Extraction.from_label(found.label())
    assert again == found
    assert found.label() == Extraction.from_label(found.label()).label()


def test_supported_endpoint_reads_spaces_and_underscores_case_blind() -> None:
    assert supported_endpoint("from the Red Box to the green_crate", CONTAINERS) == "green_crate"
    assert supported_endpoint("the crate", CONTAINERS) is None
    assert supported_endpoint("RED_BOX", CONTAINERS) == "red_box"


def test_tags_names_and_rounds_match_without_regard_to_case() -> None:
    found = parse("It is in the red_box [t:kim]. Bob said so [s:BOB@r1].")
    assert found.claims == (
        Claim("testimony", "Kim", None, "red_box"),
        Claim("statement", "Bob", "R1", None),
    )
    assert found.invalid == ()


def test_a_citation_after_its_sentence_supports_that_sentence() -> None:
    found = parse(
        "The object is in the blue_box. [T:Kim] Then Sam put it elsewhere [T:Sam]. [S:Bob@R1]"
    )
    # [T:Kim] opens a sentence naming no container: it binds to the blue_box before it. Sam's
    # sentence names none and does not open with its mark: no endpoint. [S:Bob@R1] binds to
    # Sam's sentence, which supports nothing.
    assert found.claims == (
        Claim("testimony", "Kim", None, "blue_box"),
        Claim("testimony", "Sam", None, None),
        Claim("statement", "Bob", "R1", None),
    )
    two = parse("It ended in the green crate. [T:Kim] [S:Cal@R1]")
    assert {c.supports for c in two.claims} == {"green_crate"}


def test_citing_a_testimony_the_speaker_never_received_is_invalid() -> None:
    context = context_for("Ann", "R1", SENDERS, SPOKEN, CONTAINERS, received={"Ann", "Kim"})
    found = parse_markup("Kim: red_box [T:Kim]. Sam wrote to Bob: blue_box [T:Sam].", context)
    assert found.claims == (Claim("testimony", "Kim", None, "red_box"),)
    assert found.invalid == (Invalid("[T:Sam]", "not_received"),)


def test_who_received_which_testimony() -> None:
    from backchannel.paradigms.testimony._citations import received_by

    sent = [
        ("Kim", "direct", ("Ann",)),
        ("Sam", "direct", ("Bob",)),
        ("Bob", "broadcast", ("Kim", "Sam", "Ann", "Cal")),
    ]
    assert received_by("Ann", sent) == {"Kim", "Bob"}
    assert received_by("Sam", sent) == {"Sam", "Bob"}  # one's own message counts
    assert received_by("Quinn", sent) == {"Bob"}  # an observer: broadcasts only
