"""The population hook: a paradigm's (or a layer's) rules for `sim/population`, keyed by its own
prompt names, and the call a rule answers.

A rule reads what the call is from its `CallInfo` (which prompt, which agent and role, the item,
the facts its caller attached, what the agent saw), never the prompt's wording; it may hash the
prompt's texts to fix its draws. These types import nothing heavy, so a plugin can use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from backchannel.backends._pop_draw import call_uniform, system_text, uniform
from backchannel.backends._types import CALL_SOURCES, CallInfo, CallSource, Request

P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class PopulationCall(Generic[P]):
    """One call as a population rule sees it: the request, what it is, and the parameters of
    the asked model (its section of `population:`, with the model's overrides)."""

    request: Request
    info: CallInfo
    params: P

    @property
    def model(self) -> str:
        return self.request.model

    @property
    def system(self) -> str:
        """The system text of the prompt: the agent's instructions, to key its lasting traits."""
        return system_text(self.request)

    @staticmethod
    def uniform(*parts: object) -> float:
        """A uniform number in [0, 1) fixed by `parts`: for lasting traits (what an agent knows,
        where it starts), the same in every call that names the same parts."""
        return uniform(*parts)

    def fresh(self, salt: str) -> float:
        """A uniform number fixed by this call (its prompt, seed, replicate) and `salt`: for a
        per-call choice (what an agent says this turn)."""
        return call_uniform(self.request, salt)


Rule = Callable[[PopulationCall[P]], "str | None"]
"""A population rule: the answer text of one call, or None for the scripted answer."""


@dataclass(frozen=True)
class Population(Generic[P]):
    """A simulated population's rules, as a paradigm declares them (`Paradigm.population`).

    `params` is the pydantic model of its section of the experiment file's `population:` (the
    section is named after the paradigm). `rules` answer its own calls by the names its rooms,
    probes and `ctx.ask` give them (`name=`); `judges` answer its judge tasks by task name.
    `source` says whose calls `rules` answer: a paradigm's (the default), or the screening
    question's (the datasets layer's rules).
    """

    params: type[P]
    rules: Mapping[str, Rule[P]] = field(default_factory=dict)
    judges: Mapping[str, Rule[P]] = field(default_factory=dict)
    source: CallSource = "paradigm"

    def __post_init__(self) -> None:
        if not (isinstance(self.params, type) and issubclass(self.params, BaseModel)):
            raise TypeError("Population.params must be a pydantic model class")
        if self.source not in CALL_SOURCES or self.source == "judge":
            raise ValueError("Population.source is `paradigm` or `screening` (judges: `judges`)")
        for name, rule in (*self.rules.items(), *self.judges.items()):
            if not callable(rule):
                raise TypeError(f"population rule {name!r} is not callable")

    def rule_for(self, info: CallInfo) -> Rule[P] | None:
        """The rule that answers a call, if this population has one."""
        if info.source == "judge":
            return self.judges.get(info.prompt)
        if info.source == self.source:
            return self.rules.get(info.prompt)
        return None
