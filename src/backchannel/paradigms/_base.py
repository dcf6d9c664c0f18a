"""The paradigm interface: what happens in a conversation, how it is measured and reported."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from backchannel.engine import ConversationContext, Item

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.report import Report


@dataclass(frozen=True, slots=True)
class CallEstimate:
    """The exact number of model calls a conversation makes (without re-asks or retries), per
    model, and rough token counts for the dry run."""

    calls: dict[str, int]
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


class Paradigm(ABC):
    """Subclass this, set `name` and `Settings`, and register the class in `paradigms/__init__`."""

    name: ClassVar[str]
    Settings: ClassVar[type[BaseModel]]
    prompt_package: ClassVar[str | None] = None
    known_factors: ClassVar[frozenset[str] | None] = None
    """Factor names the paradigm reads; others are a config error. None: `check_cell` decides."""

    @abstractmethod
    def items(self, settings: Any, seed: int) -> list[Item]:
        """The items (questions, topics, scenarios) every cell runs on."""

    def items_for_cell(self, cell: dict[str, Any], settings: Any, items: list[Item]) -> list[Item]:
        """The items a cell runs on (default: all); e.g. a `dataset` factor keeps its own items."""
        return items

    def check_cell(self, cell: dict[str, Any], settings: Any) -> None:
        """Raise ConfigError when a combination of factor levels cannot run."""
        return None

    @abstractmethod
    def estimate(
        self, cell: dict[str, Any], item: Item, settings: Any, replicate: int = 0
    ) -> CallEstimate:
        """Calls the conversation of this cell, item and replicate will make."""

    @abstractmethod
    async def run(self, ctx: ConversationContext) -> None:
        """Run one conversation; events go to `ctx.log` via rooms, `ctx.ask`, `ctx.record`."""

    @abstractmethod
    def metrics(self, tables: RunTables, **options: Any) -> dict[str, Any]:
        """JSON-able figures of a run (what `backchannel metrics RUN --json` prints)."""

    @abstractmethod
    def report(self, tables: RunTables, metrics: dict[str, Any], report: Report) -> None:
        """Fill the HTML report."""

    def models(self, cell: dict[str, Any], settings: Any) -> set[str]:
        """Every model a conversation of this cell may call (so backends start before the run)."""
        found: set[str] = set()
        _collect_models(cell, found)
        _collect_models(settings.model_dump() if isinstance(settings, BaseModel) else {}, found)
        return found

    def templates(self) -> dict[str, str]:
        """The prompt templates this paradigm uses (recorded in the manifest)."""
        if self.prompt_package is None:
            return {}
        folder = resources.files(self.prompt_package)
        return {
            entry.name: entry.read_text(encoding="utf-8")
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".txt")
        }

    def template(self, name: str) -> str:
        if self.prompt_package is None:
            raise KeyError(name)
        return (resources.files(self.prompt_package) / name).read_text(encoding="utf-8")


MODEL_KEYS = ("model", "models")


def is_model_key(key: str) -> bool:
    """Keys whose values are model strings: `model`, `models`, `*_model`, `*_models`."""
    return key in MODEL_KEYS or key.endswith("_model") or key.endswith("_models")


def _collect_models(value: Any, found: set[str], key: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _collect_models(v, found, str(k))
    elif isinstance(value, list):
        for v in value:
            _collect_models(v, found, key)
    elif isinstance(value, str) and is_model_key(key):
        found.add(value)
