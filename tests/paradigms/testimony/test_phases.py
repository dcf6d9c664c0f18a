"""Checkpoint names and stored round numbers line up the same way in every condition."""

from __future__ import annotations

import pytest

from backchannel.paradigms.testimony._phases import label_of, participant_checkpoints, round_of


def test_round_numbers_of_every_moment() -> None:
    labels = ["T0", "T1", "R1", "O1", "R2", "O2", "R3", "O3"]
    assert [round_of(label) for label in labels] == list(range(8))
    assert [label_of(n) for n in range(8)] == labels
    assert participant_checkpoints(3) == ["T0", "T1", "R1", "R2", "R3"]
    assert participant_checkpoints(1) == ["T0", "T1", "R1"]


@pytest.mark.parametrize("label", ["T2", "R0", "X1"])
def test_unknown_checkpoints_are_refused(label: str) -> None:
    with pytest.raises(ValueError):
        round_of(label)
