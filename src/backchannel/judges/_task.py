"""What kind of judging a target asks for: a label set, the prompt of a model judge, and
optionally a deterministic rule.

Paradigms define their tasks (the factual-question tasks are two of them); the rule judge and the
LLM judge apply whichever task a target names, so `judge` and `agree` work for every paradigm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backchannel.judges._target import Target


@dataclass(frozen=True, slots=True)
class JudgeTask:
    """One kind of judging, named as `backchannel judge --kind` and `agree` name it.

    `prompt` renders the user message a model judge is asked; `rule` labels without a model
    (None: only model judges can label this task); `context` says whether the judge sees the
    public messages before the target.
    """

    name: str
    labels: tuple[str, ...]
    prompt: Callable[[Target], str]
    rule: Callable[[Target], str] | None = None
    context: bool = False

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"a judge task name is letters, digits and _, not {self.name!r}")
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError(f"task {self.name!r}: give at least two distinct labels")
