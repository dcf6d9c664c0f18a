"""Stance pairs as the divergence kit reads them: typed rows and the one rule of "moved".

A paradigm's `stance_pairs` hook builds plain rows (one per public turn and its private probe);
this module gives them the contract's column order and dtypes, so every paradigm's frame reads
alike (`backchannel.analysis.STANCE_PAIR_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import STANCE_PAIR_COLUMNS

FLAGS = ("public_moved", "private_moved", "agree")


def moved_toward(start: float, now: float, side: int) -> bool:
    """Whether `now` lies beyond `start` in the direction `side` (+1 or -1) of the pressure."""
    if side not in (-1, 1):
        raise ValueError(f"a side is +1 or -1, got {side!r}")
    return (now - start) * side > 0


def skipped_row(base: Mapping[str, Any], reason: str) -> dict[str, Any]:
    """A pair that cannot be classified: its flags are NA and `skipped` says why."""
    return {**base, **dict.fromkeys(FLAGS), "skipped": reason}


def pairs_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The rows as a stance-pairs frame: the contract's columns in order, `probe_seq` Int64 and
    the flags nullable booleans."""
    return _typed(pd.DataFrame(list(rows), columns=list(STANCE_PAIR_COLUMNS)))


def pairs_frame_of_columns(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """`pairs_frame` of rows given as columns (a list per contract column): the same columns,
    dtypes and values, without a dict per row."""
    frame = pd.DataFrame(
        {c: pd.Series(columns[c], dtype=object) for c in STANCE_PAIR_COLUMNS},
        columns=list(STANCE_PAIR_COLUMNS),
    )
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract's dtypes on a frame of its columns."""
    frame["conversation_id"] = frame["conversation_id"].astype(str)
    frame["agent"] = frame["agent"].astype(str)
    frame["role"] = frame["role"].astype(str)
    frame["round"] = frame["round"].astype(int)
    frame["turn_seq"] = frame["turn_seq"].astype(int)
    frame["probe_seq"] = frame["probe_seq"].astype("Int64")
    for flag in FLAGS:
        frame[flag] = frame[flag].astype("boolean")
    frame["skipped"] = frame["skipped"].astype(object).where(frame["skipped"].notna(), None)
    return frame


OFF_THE_RECORD = "off_the_record"
"""The name of the probe that asks a speaker privately, right after its turn, what it thinks."""


def off_the_record(events: pd.DataFrame) -> dict[tuple[str, int], dict[Any, Any]]:
    """Each off-the-record probe by (conversation, the `seq` of the public turn it follows)."""
    found: dict[tuple[str, int], dict[Any, Any]] = {}
    if not len(events):
        return found
    probes = events[(events["kind"] == "probe") & (events["name"] == OFF_THE_RECORD)]
    for event in probes.to_dict("records"):
        meta = event["meta"] if isinstance(event["meta"], dict) else {}
        turn = meta.get("turn_seq")
        if isinstance(turn, int) and not isinstance(turn, bool):
            found[(str(event["conversation_id"]), turn)] = event
    return found
