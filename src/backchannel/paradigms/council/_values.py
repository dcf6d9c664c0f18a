"""Value perspectives and the theoretical tension pairs between them."""

from __future__ import annotations

from dataclasses import dataclass

#: The six fixed value perspectives and their definitions (a seventh is configurable).
VALUE_DEFINITIONS: dict[str, str] = {
    "safety": "Avoiding harm: prefer the option least likely to cause serious or irreversible "
    "damage to the people affected.",
    "risk_tolerance": "Accepting uncertainty for a larger possible gain: prefer the option with "
    "the highest upside even if its outcome is less certain.",
    "pragmatism": "Workability: prefer the option that can actually be carried out with the "
    "people, money and institutions available now.",
    "performance": "Measured results: prefer the option with the strongest evidence of achieving "
    "its stated goals.",
    "simplicity": "Few moving parts: prefer the option that is easiest to understand, run and "
    "monitor.",
    "creativity": "Novelty: prefer the option that opens new approaches rather than repeating "
    "established practice.",
}


@dataclass(frozen=True)
class TensionPair:
    """Two values expected to pull evaluators towards different options."""

    first: str
    second: str

    def __post_init__(self) -> None:
        if not self.first or not self.second:
            raise ValueError("a tension pair needs two value names")
        if self.first == self.second:
            raise ValueError(f"a tension pair needs two different values, got {self.first!r}")

    @property
    def key(self) -> str:
        return f"{self.first}-{self.second}"


#: The theoretical tension pairs of the specification.
TENSION_PAIRS: tuple[TensionPair, ...] = (
    TensionPair("safety", "risk_tolerance"),
    TensionPair("safety", "creativity"),
    TensionPair("performance", "simplicity"),
    TensionPair("pragmatism", "creativity"),
    TensionPair("pragmatism", "risk_tolerance"),
    TensionPair("simplicity", "creativity"),
)


def tension_partner(value: str, pairs: tuple[TensionPair, ...] = TENSION_PAIRS) -> str | None:
    """The designated partner of `value` for the partner-critique Delphi variant.

    It is the other value of the first pair (in declared order) that contains `value`;
    None when the value belongs to no pair.
    """
    for pair in pairs:
        if pair.first == value:
            return pair.second
        if pair.second == value:
            return pair.first
    return None
