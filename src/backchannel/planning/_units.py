"""A contrast's units: each conversation of either arm with its outcome, arm, stratum and pair
keys, assembled from the paradigm's reader and the run's conversations table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backchannel.analysis import Design
from backchannel.planning._contrast import UNIT_COLUMNS, Contrast, Options

if TYPE_CHECKING:
    from backchannel.analysis import RunTables

FIRST, SECOND = "first", "second"


@dataclass(frozen=True)
class Units:
    """One row per conversation in either arm: `conversation_id`, `arm` (first or second),
    `value`, `trials`, the pair keys and the stratum keys (`strata`, in order)."""

    frame: pd.DataFrame
    strata: tuple[str, ...]


def contrast_units(contrast: Contrast, tables: RunTables, options: Options) -> Units:
    """The reader's outcomes joined to each conversation's factor levels, item and replicate;
    conversations in neither arm are left out."""
    read = contrast.reader(tables, options)
    missing = [c for c in UNIT_COLUMNS if c not in read.columns]
    if missing:
        raise ValueError(f"contrast {contrast.name}: its reader gave no column {missing}")
    design = Design.of(tables)
    conversations = tables.conversations
    levels = design.levels(conversations) if len(conversations) else {}
    keys = conversations.set_index(conversations["conversation_id"].astype(str))
    ids = read["conversation_id"].astype(str)
    frame = pd.DataFrame({"conversation_id": ids.to_numpy()})
    frame["value"] = pd.to_numeric(read["value"], errors="coerce").to_numpy(dtype=float)
    trials = read["trials"] if "trials" in read.columns else pd.Series(1, index=read.index)
    frame["trials"] = pd.to_numeric(trials, errors="coerce").fillna(0).to_numpy(dtype=float)
    for column in ("item_id", "replicate"):
        frame[column] = (
            read[column].to_numpy()
            if column in read.columns
            else keys[column].reindex(ids).to_numpy()
        )
    strata = tuple(contrast.stratum_keys(design.factors))
    wanted = list(dict.fromkeys([*contrast.arm_keys, *strata, *contrast.pair_by]))
    for key in wanted:
        if key in frame.columns:
            continue
        if key in read.columns:
            frame[key] = [_plain(v) for v in read[key]]
        elif key in design.factors:
            frame[key] = [levels.get(cid, {}).get(key) for cid in ids]
        else:
            raise ValueError(
                f"contrast {contrast.name}: {key!r} is neither a factor of the run nor a key "
                "its reader gives"
            )
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()}
        for r in frame[list(contrast.arm_keys)].to_dict(orient="records")
    ]
    arm = [
        FIRST if contrast.first.matches(r) else SECOND if contrast.second.matches(r) else None
        for r in records
    ]
    frame["arm"] = arm
    frame = frame[frame["arm"].notna()].reset_index(drop=True)
    return Units(frame, strata)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value
