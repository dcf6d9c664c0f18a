"""Checkpoint and round numbers: T0 = 0, T1 = 1 (after testimony), Rk = 2k, Ok = 2k + 1.

Every vote is stored with the number of the moment it was asked and every statement with the
number of its round, the same in every condition, so tables of different cells line up.
"""

from __future__ import annotations


def round_of(label: str) -> int:
    """`"T0"` -> 0, `"T1"` -> 1, `"R2"` -> 4, `"O2"` -> 5."""
    if label in ("T0", "T1"):
        return int(label[1])
    kind, number = label[0], int(label[1:])
    if kind not in "RO" or number < 1:
        raise ValueError(f"unknown checkpoint {label!r}")
    return 2 * number + (1 if kind == "O" else 0)


def label_of(number: int) -> str:
    """The inverse of `round_of`."""
    if number < 0:
        raise ValueError(f"no checkpoint {number}")
    if number < 2:
        return f"T{number}"
    return f"{'O' if number % 2 else 'R'}{number // 2}"


def participant_checkpoints(rounds: int) -> list[str]:
    """T0, T1, R1..RK: where the story roles vote."""
    return ["T0", "T1", *(f"R{k}" for k in range(1, rounds + 1))]
