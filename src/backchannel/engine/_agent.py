"""Agents: who speaks, with which persona, role, model and sampling settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from backchannel.backends import GenerationSettings, check_model


@dataclass(frozen=True, slots=True)
class Agent:
    """One participant. `system` is the stable instruction that opens every prompt it gets.

    `own_reasoning`: whether its own earlier reasoning appears in its own later prompts (never
    in anyone else's); None follows its model's setting, which defaults to no. `facts` are its
    private parameters as data (an assigned stance, a pushed answer): every call it makes carries
    them in its call information, for a simulated population; no prompt shows them.
    """

    name: str
    role: str
    model: str
    persona: str = ""
    system: str = ""
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    own_reasoning: bool | None = None
    facts: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.name or self.name.lower() in ("you", "moderator"):
            raise ValueError(f"agent name {self.name!r} is empty or reserved")
        check_model(self.model)
