"""The paradigm interface: what happens in a conversation, how it is measured and reported."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from backchannel.engine import ConversationContext, Item
from backchannel.errors import ConfigError
from backchannel.judges import CONTEXT_TURNS
from backchannel.paradigms._factors import S, check_factor_names, resolve_cell

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import Metrics, RunTables, Study
    from backchannel.backends import Population, PopulationBook
    from backchannel.judges import JudgeTask, Judging, Labelling, Relabelling, Target
    from backchannel.paradigms._view import View
    from backchannel.planning import Contrast
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


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """What `metrics` and `report` may be asked for; each paradigm declares which it reads
    (`Paradigm.reads_options`), and the commands refuse the others."""

    judge: str | None = None
    """The judge whose labels the metrics use (default: the paradigm's choice)."""
    second_judge: str | None = None
    """A second judge, for agreement figures and relabel reweighting."""
    threshold: float | None = None
    """A paradigm's decision threshold (council: the tension threshold; default its setting)."""

    def given(self) -> dict[str, Any]:
        """The options set to something, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


class Paradigm(ABC, Generic[S]):
    """Subclass `Paradigm[MySettings]`, set `name` and `Settings`, and register it (a name in the
    registry, a `package.module:Class` path, or an entry point in `backchannel.paradigms`).

    Factors are fields of `Settings`: a cell's levels override the settings of the same names and
    are validated by `Settings`, so every method below receives the cell's resolved settings.
    """

    name: ClassVar[str]
    Settings: type[S]
    prompt_package: ClassVar[str | None] = None
    fixed_settings: ClassVar[frozenset[str]] = frozenset()
    """Settings no factor may vary (typically the items: questions, datasets, scenarios)."""
    label_factors: ClassVar[bool] = False
    """If true, factor names that are no setting are kept as labels of the cells."""
    reads_options: ClassVar[frozenset[str]] = frozenset()
    """The `AnalysisOptions` fields `metrics` reads (e.g. judge, second_judge, threshold)."""
    judging: ClassVar[Judging | None] = None
    """What judges label in a stored run (`judges.Judging`: tasks and targets); None: nothing."""
    population: ClassVar[Population[Any] | None] = None
    """What `sim/population` answers this paradigm's calls with (`backends.Population`: the
    parameters of its `population:` section, rules by prompt name and judge task); None: the
    scripted answer."""
    view: ClassVar[View | None] = None
    """What the transcript viewer shows of a conversation beyond its timeline (`View`: table
    columns, badges, panels, round names); None: the generic timeline only."""
    manipulation: ClassVar[str | None] = None
    """What the paradigm's manipulation is, in a sentence: the reference the `awareness` judge
    compares an agent's guess at the study with (docs/validity.md)."""
    paired_factors: ClassVar[frozenset[str]] = frozenset()
    """Factors whose levels are arms of one pair (a manipulation and its reference): cells that
    differ only in these share their calls' seeds, so what the arms ask alike is asked once
    (the experiment's `share_paired_calls`)."""

    # design ---------------------------------------------------------------------------------
    @classmethod
    def factors(cls) -> frozenset[str]:
        """The names a factor may take: every setting except the fixed ones."""
        return frozenset(cls.Settings.model_fields) - cls.fixed_settings

    def check_factors(self, names: list[str]) -> None:
        """Raise ConfigError for a factor name this paradigm cannot vary."""
        check_factor_names(
            self.name, names, self.factors(), self.fixed_settings, labels=self.label_factors
        )

    def resolve(self, cell: Mapping[str, Any], settings: S) -> S:
        """The settings of one cell: its levels override the settings of the same names."""
        resolved = resolve_cell(settings, cell, self.factors())
        try:
            self.check_cell(resolved)
        except ConfigError as error:
            levels = ", ".join(f"{k}={v!r}" for k, v in cell.items())
            raise ConfigError(f"cell {levels}: {error}") from None
        return resolved

    @abstractmethod
    def items(self, settings: S, seed: int) -> list[Item]:
        """The items (questions, topics, scenarios) every cell runs on."""

    def items_for_cell(self, settings: S, items: list[Item]) -> list[Item]:
        """The items a cell (given by its resolved settings) runs on (default: all)."""
        return items

    def check_cell(self, settings: S) -> None:
        """Raise ConfigError when a cell's resolved settings cannot run."""
        return None

    @abstractmethod
    def estimate(self, settings: S, item: Item, replicate: int = 0) -> CallEstimate:
        """Calls the conversation of this cell, item and replicate will make."""

    @abstractmethod
    async def run(self, ctx: ConversationContext[S]) -> None:
        """Run one conversation; events go to `ctx.log` via rooms, `ctx.ask`, `ctx.record`."""

    def models(self, settings: S) -> set[str]:
        """Every model a conversation of this cell may call (so backends start before the run)."""
        found: set[str] = set()
        _collect_models(settings.model_dump(), found)
        return found

    # analysis -------------------------------------------------------------------------------
    @abstractmethod
    def metrics(self, tables: RunTables, options: AnalysisOptions) -> Metrics | dict[str, Any]:
        """The run's figures as typed results (a `backchannel.Metrics` subclass whose per-cell
        rows carry the run's `Design` factors); `--json` prints their `as_json()`."""

    @abstractmethod
    def report(self, tables: RunTables, metrics: Any, report: Report) -> None:
        """Fill the HTML report from what `metrics` returned."""

    def stance_pairs(self, tables: RunTables, options: AnalysisOptions) -> pd.DataFrame | None:
        """Each public turn of a finished conversation beside the same agent's nearest private
        answer on the same question, read as moved toward the pressure or not (the columns of
        `backchannel.analysis.STANCE_PAIR_COLUMNS`; docs/divergence.md). The shared layer turns
        them into the `divergence` section of the metrics; None (default): no such reading."""
        return None

    def tables(self, tables: RunTables) -> dict[str, pd.DataFrame]:
        """Tidy tables of this paradigm beyond events, labels and conversations, by name
        (written by `backchannel export` next to them); none by default."""
        return {}

    def opinion_trajectories(
        self, tables: RunTables, options: AnalysisOptions
    ) -> pd.DataFrame | None:
        """Each agent's private and public opinion per round with its neighbours' expressed
        mean (`analysis.OPINION_COLUMNS`), which the shared layer fits the Friedkin-Johnsen
        model to (the `influence` section); None (the default): no opinion on one scale."""
        return None

    def study(self) -> Study | None:
        """The source study's published headline values (`study.yaml` in the paradigm's
        package), printed beside a run's by `metrics --compare-study` and the report."""
        import sys

        from backchannel.analysis import load_study

        package = sys.modules[type(self).__module__].__package__
        return load_study(package) if package else None

    def contrasts(self, levels: Mapping[str, Sequence[Any]]) -> tuple[Contrast, ...]:
        """The headline contrasts of a design whose factors have these levels (the ones
        `metrics` leads with, as `planning.Contrast`s: `backchannel plan` sizes them and `run
        --until` stops on them); a contrast whose arms the design lacks is left out. Default:
        none."""
        return ()

    def check_options(self, options: AnalysisOptions) -> None:
        """Refuse an analysis option this paradigm does not read."""
        for name in options.given():
            if name not in self.reads_options:
                reads = ", ".join(f"--{o.replace('_', '-')}" for o in sorted(self.reads_options))
                raise ConfigError(
                    f"--{name.replace('_', '-')}: the {self.name} paradigm does not read this "
                    f"option; it reads {reads or 'no options'}"
                )

    def labelling(self) -> Labelling | None:
        """What `backchannel judge` and `agree` do with this paradigm's runs (default: one
        label per event from its `judging` tasks; None: nothing to judge)."""
        if self.judging is None:
            return None
        from backchannel.judges import TaskLabelling

        return TaskLabelling(self.judging, self.relabelled)

    def judge_tasks(self) -> tuple[JudgeTask, ...]:
        """The kinds of judging a stored run offers `backchannel judge` and `agree` (default:
        none, and both commands refuse the run)."""
        return () if self.judging is None else self.judging.tasks

    def judge_targets(
        self,
        tables: RunTables,
        kinds: Collection[str] | None = None,
        *,
        context_turns: int = CONTEXT_TURNS,
    ) -> list[Target]:
        """The events of finished conversations a judge labels, of the named task kinds (None:
        every task), in stored order."""
        if self.judging is None:
            return []
        return self.judging.targets(tables, kinds, context_turns=context_turns)

    def relabelled(self, tables: RunTables, judge_a: str, judge_b: str) -> Relabelling | None:
        """The paradigm's outcome re-weighted by how judge B relabels judge A (default: none)."""
        return None

    def order_answers(self, tables: RunTables) -> pd.DataFrame | None:
        """For the order checks (`analysis.ORDER_COLUMNS`): each answer of finished
        conversations with the options in the order shown and the positions of the speakers
        before it in the order they spoke; None: the paradigm declares none."""
        return None

    def population_book(self) -> PopulationBook:
        """The rules a run of this paradigm answers with on `sim/population`: its own, under
        its name (the name of its section of `population:`), and the awareness probe's (section
        `awareness`)."""
        from backchannel.backends import PopulationBook
        from backchannel.judges import AWARENESS, AWARENESS_POPULATION

        own = PopulationBook.of(self.name, self.population).sections
        return PopulationBook({**own, AWARENESS: AWARENESS_POPULATION})

    # prompts --------------------------------------------------------------------------------
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
