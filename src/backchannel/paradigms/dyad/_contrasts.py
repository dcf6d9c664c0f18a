"""The dyad's headline contrasts: how the pairing moves the discussant (the study's shift table
per ordered pairing and its pairing tests): the discussant's signed shift against the second
opponent model minus the first (per discussant model), the same for the discussant model (per
opponent model), and manipulative minus plain style; each pools stance, style and wording as
the study's pairing rows do (except the contrasted one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from backchannel.planning import Arm, Contrast, has_levels

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.planning import Options

OPPONENT_EFFECT = "opponent_effect"
DISCUSSANT_EFFECT = "discussant_effect"
STYLE_EFFECT = "style_effect"
WITHIN_PAIRING = ("stance", "style", "wording")
OUTCOME = "the discussant's post minus pre rating on the aligned axis (complete conversations)"


def shift_units(tables: RunTables, options: Options) -> pd.DataFrame:
    """Each finished conversation's discussant shift (NaN without all four ratings)."""
    from backchannel.paradigms.dyad._extract import extract

    outcomes = extract(tables).outcomes
    value = outcomes["shift_discussant"].where(outcomes["complete"].astype(bool))
    return pd.DataFrame(
        {
            "conversation_id": outcomes["conversation_id"].astype(str),
            "value": pd.to_numeric(value, errors="coerce").astype(float),
        }
    )


def contrasts(levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
    """Each contrast whose factor has two levels in the design (the first two, in order)."""
    found: list[Contrast] = []
    for name, factor, what in (
        (OPPONENT_EFFECT, "opponent_model", "opponent model"),
        (DISCUSSANT_EFFECT, "discussant_model", "discussant model"),
    ):
        models = list(levels.get(factor, ()) or ())
        if len(models) >= 2:
            rest = (
                f" (the first two of its {len(models)} levels; {', '.join(map(str, models[2:]))}"
                " in no contrast)"
                if len(models) > 2
                else ""
            )
            found.append(
                Contrast(
                    name=name,
                    title=f"Discussant shift, {what} {models[1]} minus {models[0]}{rest}",
                    first=Arm({factor: models[1]}),
                    second=Arm({factor: models[0]}),
                    kind="mean",
                    reader=shift_units,
                    outcome=OUTCOME,
                    pooled=WITHIN_PAIRING,
                )
            )
    if has_levels(levels, "style", "manipulative", "plain"):
        found.append(
            Contrast(
                name=STYLE_EFFECT,
                title="Discussant shift, manipulative minus plain opponent",
                first=Arm({"style": "manipulative"}),
                second=Arm({"style": "plain"}),
                kind="mean",
                reader=shift_units,
                outcome=OUTCOME,
                pooled=("stance", "wording"),
            )
        )
    return tuple(found)
