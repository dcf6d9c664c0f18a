"""Borda, weighted Borda, first-choice concentration and entropy on hand-made rankings."""

import math
from itertools import combinations_with_replacement

import pytest
from scipy import stats

from backchannel.paradigms.council import (
    Ballot,
    borda,
    first_choice_concentration,
    first_choice_entropy,
    first_choice_shares,
)

OPTIONS = ("a", "b", "c")


def _ballots(firsts: list[str], scores: list[float] | None = None) -> list[Ballot]:
    """Ballots whose first choice is given; the rest keep the order a, b, c."""
    out = []
    for i, first in enumerate(firsts):
        rest = tuple(o for o in OPTIONS if o != first)
        score = None if scores is None else scores[i]
        out.append(Ballot(f"e{i}", "safety", (first, *rest), score))
    return out


def _from_counts(counts: tuple[int, int, int]) -> list[Ballot]:
    return _ballots([o for o, k in zip(OPTIONS, counts, strict=True) for _ in range(k)])


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # FCC = (p_max - 1/3) / (2/3) = (3 * k_max - 7) / 14 for seven evaluators.
        ((3, 2, 2), 1 / 7),  # (9 - 7) / 14 = 2/14 = 14.3 %
        ((4, 2, 1), 2.5 / 7),  # (12 - 7) / 14 = 5/14 = 35.7 %
        ((5, 1, 1), 4 / 7),  # (15 - 7) / 14 = 8/14 = 57.1 %
        ((6, 1, 0), 5.5 / 7),  # (18 - 7) / 14 = 11/14 = 78.6 %
        ((7, 0, 0), 1.0),  # (21 - 7) / 14 = 1 = 100 %
    ],
)
def test_fcc_takes_the_five_documented_values(counts, expected):
    assert first_choice_concentration(_from_counts(counts), OPTIONS) == pytest.approx(expected)


def test_fcc_over_all_partitions_of_seven_depends_only_on_the_largest_group():
    # Every partition of 7 votes into 3 options lands on one of the five values, by its max.
    expected = {3: 1 / 7, 4: 2.5 / 7, 5: 4 / 7, 6: 5.5 / 7, 7: 1.0}
    seen = set()
    for combo in combinations_with_replacement(range(8), 3):
        if sum(combo) != 7:
            continue
        counts = (combo[2], combo[1], combo[0])
        value = first_choice_concentration(_from_counts(counts), OPTIONS)
        assert value == pytest.approx(expected[max(counts)])
        seen.add(round(value * 1000))
    assert {round(v * 1000) for v in expected.values()} == seen


def test_fcc_is_zero_for_an_even_split_and_nan_without_votes():
    assert first_choice_concentration(_from_counts((2, 2, 2)), OPTIONS) == pytest.approx(0.0)
    assert math.isnan(first_choice_concentration([], OPTIONS))


def test_borda_hand_count():
    ballots = [
        Ballot("e0", "safety", ("a", "b", "c")),
        Ballot("e1", "pragmatism", ("a", "c", "b")),
        Ballot("e2", "creativity", ("b", "c", "a")),
    ]
    # a: 2 + 2 + 0 = 4; b: 1 + 0 + 2 = 3; c: 0 + 1 + 1 = 2. Margin (4 - 3) / (2 x 3) = 1/6.
    tally = borda(ballots, OPTIONS)
    assert dict(tally.scores) == {"a": 4.0, "b": 3.0, "c": 2.0}
    assert tally.winner == "a" and not tally.tied
    assert tally.margin == pytest.approx(1 / 6)


def test_weighted_borda_multiplies_points_by_score():
    ballots = [
        Ballot("e0", "safety", ("a", "b", "c"), 1.0),
        Ballot("e1", "pragmatism", ("a", "c", "b"), 0.5),
        Ballot("e2", "creativity", ("b", "c", "a"), 0.8),
    ]
    # a: 2*1.0 + 2*0.5 + 0 = 3.0; b: 1*1.0 + 0 + 2*0.8 = 2.6; c: 0 + 1*0.5 + 1*0.8 = 1.3.
    # Max possible = 2 x (1.0 + 0.5 + 0.8) = 4.6; margin = (3.0 - 2.6) / 4.6.
    tally = borda(ballots, OPTIONS, weighted=True)
    assert tally.scores["a"] == pytest.approx(3.0)
    assert tally.scores["b"] == pytest.approx(2.6)
    assert tally.scores["c"] == pytest.approx(1.3)
    assert tally.winner == "a"
    assert tally.margin == pytest.approx(0.4 / 4.6)


def test_weighting_can_change_the_winner_and_nobody_is_silenced():
    ballots = [
        Ballot("e0", "safety", ("a", "b", "c"), 0.1),
        Ballot("e1", "pragmatism", ("a", "b", "c"), 0.1),
        Ballot("e2", "creativity", ("b", "a", "c"), 0.9),
    ]
    # Unweighted a: 2+2+1 = 5, b: 1+1+2 = 4. Weighted a: 0.2+0.2+0.9 = 1.3,
    # b: 0.1+0.1+1.8 = 2.0, c: 0; the low-scored evaluators still add their 0.1-weighted points.
    assert borda(ballots, OPTIONS).winner == "a"
    weighted = borda(ballots, OPTIONS, weighted=True)
    assert weighted.winner == "b"
    assert weighted.scores["a"] == pytest.approx(1.3)


def test_weighted_borda_requires_scores():
    with pytest.raises(ValueError, match="no verification score"):
        borda([Ballot("e0", "safety", ("a", "b", "c"))], OPTIONS, weighted=True)


def test_borda_tie_has_two_winners_and_zero_margin():
    ballots = [Ballot("e0", "safety", ("a", "b", "c")), Ballot("e1", "safety", ("b", "a", "c"))]
    # a: 2 + 1 = 3, b: 1 + 2 = 3, c: 0.
    tally = borda(ballots, OPTIONS)
    assert tally.winners == ("a", "b") and tally.tied and tally.winner is None
    assert tally.margin == 0.0


def test_ballots_must_rank_every_option_once():
    with pytest.raises(ValueError, match="twice"):
        Ballot("e0", "safety", ("a", "a", "b"))
    with pytest.raises(ValueError, match="exactly once"):
        borda([Ballot("e0", "safety", ("a", "b"))], OPTIONS)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Ballot("e0", "safety", ("a", "b", "c"), 1.5)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((7, 0, 0), 0.0),  # one option: no uncertainty
        ((1, 1, 0), 1.0),  # two halves: one bit
        ((1, 1, 1), math.log2(3)),  # even over three: log2 3 = 1.585 bits
        # 4/7, 2/7, 1/7: -(4/7 log2 4/7 + 2/7 log2 2/7 + 1/7 log2 1/7) = 1.379 bits
        ((4, 2, 1), 1.3787834934861753),
    ],
)
def test_entropy_in_bits_matches_hand_and_scipy(counts, expected):
    ballots = _from_counts(counts)
    assert first_choice_entropy(ballots, OPTIONS) == pytest.approx(expected)
    assert first_choice_entropy(ballots, OPTIONS) == pytest.approx(
        stats.entropy([c for c in counts], base=2)
    )


def test_weighted_first_choice_shares():
    ballots = _ballots(["a", "a", "b"], [0.5, 0.5, 1.0])
    # a: 0.5 + 0.5 = 1.0, b: 1.0; total 2.0 -> shares 0.5, 0.5, 0.
    assert first_choice_shares(ballots, OPTIONS, weighted=True) == {"a": 0.5, "b": 0.5, "c": 0.0}
    assert first_choice_concentration(ballots, OPTIONS, weighted=True) == pytest.approx(0.25)
