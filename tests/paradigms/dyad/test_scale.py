"""The alignment and the interaction-state accumulator on hand-made sequences."""

import pytest

from backchannel.paradigms.dyad import Category, StatePath, align, interaction_states, step

A, R, IG = Category.ACCEPT, Category.REJECT, Category.IGNORE


def test_align_keeps_first_and_mirrors_opposite() -> None:
    assert [align(r, "first") for r in range(7)] == [0, 1, 2, 3, 4, 5, 6]
    assert [align(r, "opposite") for r in range(7)] == [6, 5, 4, 3, 2, 1, 0]


@pytest.mark.parametrize("bad", [-1, 7, 2.5, True, "3"])
def test_align_rejects_off_scale_ratings(bad: object) -> None:
    with pytest.raises(ValueError):
        align(bad, "first")  # type: ignore[arg-type]


def test_align_rejects_unknown_wording() -> None:
    with pytest.raises(ValueError):
        align(3, "sideways")


@pytest.mark.parametrize(
    ("own", "other", "category", "expected"),
    [
        (2, 5, A, 3),  # towards a higher state: up one
        (5, 2, A, 4),  # towards a lower state: down one
        (4, 4, A, 4),  # towards an equal state: no move
        (2, 5, R, 1),  # away from a higher state: down one
        (5, 2, R, 6),  # away from a lower state: up one
        (0, 5, R, 0),  # away, but already at the bottom: clipped
        (6, 1, R, 6),  # away, already at the top: clipped
        (4, 4, R, 5),  # equal above the midpoint: away from 3, upwards
        (2, 2, R, 1),  # equal below the midpoint: away from 3, downwards
        (3, 3, R, 4),  # equal at the midpoint: upwards by rule
        (6, 6, R, 6),  # equal at the top: would leave the scale, clipped
        (0, 0, R, 0),  # equal at the bottom: clipped
        (1, 6, IG, 1),  # IGNORE never moves
    ],
)
def test_step(own: int, other: int, category: Category, expected: int) -> None:
    assert step(own, other, category) == expected


def test_accumulator_on_a_hand_sequence() -> None:
    # start D=2, O=5
    # r1: D ACCEPT towards O=5 -> 3; O REJECT away from D=3 (5 > 3) -> 6
    # r2: D REJECT away from O=6 -> 2; O ACCEPT towards D=2 -> 5
    # r3: D IGNORE -> 2; O IGNORE -> 5
    # r4: D ACCEPT towards 5 -> 3; O ACCEPT towards 3 -> 4
    # r5: D ACCEPT towards 4 -> 4; O REJECT from equal 4 (above 3) -> 5
    path = interaction_states(2, 5, [(A, R), (R, A), (IG, IG), (A, A), (A, R)])
    assert path.discussant == (2, 3, 2, 2, 3, 4)
    assert path.opponent == (5, 6, 5, 5, 4, 5)
    assert path.of("opponent") == path.opponent


def test_accumulator_without_rounds_is_the_start() -> None:
    assert interaction_states(0, 6, []) == StatePath((0,), (6,))


def test_state_path_validates_itself() -> None:
    with pytest.raises(ValueError):
        StatePath((1, 2), (3,))
    with pytest.raises(ValueError):
        StatePath((7,), (3,))
    with pytest.raises(ValueError):
        StatePath((1,), (3,)).of("moderator")


def test_an_unreadable_category_makes_later_states_unknown() -> None:
    # start D=2, O=5; r1 D ACCEPT -> 3, O REJECT away from 3 -> 6
    # r2 D unreadable -> unknown; O's step reads D's state -> unknown; r3 both stay unknown
    path = interaction_states(2, 5, [(A, R), (None, A), (A, A)])
    assert path.discussant == (2, 3, None, None)
    assert path.opponent == (5, 6, None, None)
    # an unreadable Opponent category in r1 leaves D's r1 state, then D's r2 step lacks O
    path = interaction_states(2, 5, [(A, None), (IG, IG)])
    assert path.discussant == (2, 3, None)
    assert path.opponent == (5, None, None)
