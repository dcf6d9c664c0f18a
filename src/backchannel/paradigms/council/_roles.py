"""Who plays which role with which model, in state A (one model) and state B (a pool)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from backchannel.paradigms.council._settings import CouncilSettings


@dataclass(frozen=True)
class Seat:
    """One evaluator: its agent name, its value and its model."""

    name: str
    value: str
    model: str

    def __post_init__(self) -> None:
        if not self.name or not self.value or not self.model:
            raise ValueError("a seat needs a name, a value and a model")


def evaluator_names(roster: list[str]) -> list[str]:
    """`evaluator_<value>`, numbered only when a value is held by several evaluators."""
    counts = Counter(roster)
    seen: Counter[str] = Counter()
    names = []
    for value in roster:
        seen[value] += 1
        names.append(
            f"evaluator_{value}" if counts[value] == 1 else f"evaluator_{value}_{seen[value]}"
        )
    return names


def pool_model(pool: list[str], index: int, replicate: int) -> str:
    """State B without profiling: role `index` gets pool model (index + replicate) mod size."""
    return pool[(index + replicate) % len(pool)]


def seats(
    settings: CouncilSettings,
    pool: str,
    replicate: int,
    assignment: dict[str, str] | None = None,
) -> list[Seat]:
    """The evaluators of one conversation; `assignment` (value -> model) comes from profiling."""
    roster = settings.roster
    out = []
    for index, (name, value) in enumerate(zip(evaluator_names(roster), roster, strict=True)):
        if pool == "A":
            model = settings.single_model
        elif assignment is not None:
            model = assignment[value]
        else:
            model = pool_model(settings.pool_models, index, replicate)
        out.append(Seat(name, value, model))
    return out


def advocate_models(
    settings: CouncilSettings, pool: str, options: int, replicate: int
) -> list[str]:
    """The model of each option's advocate, in option order."""
    if pool == "A":
        return [settings.single_model] * options
    return [pool_model(settings.pool_models, i, replicate) for i in range(options)]


def verifier_model(settings: CouncilSettings) -> str:
    return settings.verifier_model or settings.single_model
