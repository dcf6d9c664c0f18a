"""What `backchannel judge` and `agree` do with one paradigm's runs, behind one interface.

A paradigm's judging is a `Labelling`: which kinds of labels it offers, which events each kind
labels, how a rule or a model labels them, how the stored labels are summarised, and how two
judges are compared. `TaskLabelling` is the common case (one label per event from a task's
fixed label set); a paradigm whose labels are something else (a statement's claims, say)
provides its own, so the commands never name a paradigm.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backchannel.errors import ConfigError
from backchannel.judges._agreement import Relabelling, agreement, paired_labels, target_keys
from backchannel.judges._apply import (
    RULE_MODEL,
    Judging,
    LabelRow,
    judge_targets,
    label_counts,
    make_judge,
    rule_gaps,
    sample_targets,
)

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.backends import LLMClient
    from backchannel.judges._target import JudgeTask

Relabel = Callable[["RunTables", str, str], "Relabelling | None"]


@dataclass(frozen=True, slots=True)
class LabelJob:
    """One `backchannel judge` request: which kind, which judge, stored under which name."""

    kind: str
    judge: str
    name: str
    sample: int | None = None
    seed: int = 0
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Agreement:
    """Two judges compared: the JSON `agree --json` prints and the readable lines."""

    payload: dict[str, Any]
    lines: list[str]

    def as_json(self) -> str:
        """Strict JSON (NaN as null)."""
        from backchannel.analysis import jsonable

        return json.dumps(jsonable(self.payload))


class Labelling(ABC):
    """A paradigm's judging: kinds, targets, labelling, summary and agreement."""

    unit: str = "events"
    """What one target is, in the command's output ("labelled 12 events")."""

    @property
    @abstractmethod
    def kinds(self) -> tuple[str, ...]:
        """The kinds `--kind` may name (`all` takes every one)."""

    def models(self, job: LabelJob) -> list[str]:
        """The models a job calls (none for the rule judge)."""
        return [] if job.judge == RULE_MODEL else [job.judge]

    @abstractmethod
    def targets(self, tables: RunTables, job: LabelJob) -> list[Any]:
        """What the job labels, after refusing a kind, judge or name it cannot take."""

    @abstractmethod
    async def label(self, targets: list[Any], job: LabelJob, client: LLMClient) -> list[Any]:
        """The label rows of `targets` (the rule judge needs no client calls)."""

    @abstractmethod
    def summary(self, rows: Sequence[Any]) -> list[str]:
        """Lines printed after labelling: counts by label or status."""

    @abstractmethod
    def agreement(self, tables: RunTables, judge_a: str, judge_b: str) -> Agreement:
        """The agreement of two judges, as `agree` prints it (readable or `--json`)."""


class TaskLabelling(Labelling):
    """One label per event from each task's label set (`judges.Judging`), by rule or model;
    agreement per task, plus the paradigm's outcome re-weighted by how B relabels A."""

    def __init__(self, judging: Judging, relabelled: Relabel | None = None) -> None:
        self.judging = judging
        self._relabelled = relabelled

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(task.name for task in self.judging.tasks)

    def _chosen(self, job: LabelJob) -> list[JudgeTask]:
        names = list(self.kinds)
        if job.kind != "all" and job.kind not in names:
            raise ConfigError(f"--kind {job.kind!r}: choose {', '.join(names)} or all")
        chosen = [t for t in self.judging.tasks if job.kind in ("all", t.name)]
        gaps = rule_gaps(chosen) if job.judge == RULE_MODEL else []
        if gaps:
            ruled = [task.name for task in chosen if task.name not in gaps]
            fix = f", or --kind {' / '.join(ruled)}" if ruled else ""
            raise ConfigError(
                f"the rule judge has no rule for {', '.join(gaps)} targets; use --judge "
                f"PROVIDER/MODEL{fix}"
            )
        return chosen

    def targets(self, tables: RunTables, job: LabelJob) -> list[Any]:
        chosen = self._chosen(job)
        found = self.judging.targets(tables, [task.name for task in chosen])
        return sample_targets(found, job.sample, job.seed)

    async def label(self, targets: list[Any], job: LabelJob, client: LLMClient) -> list[Any]:
        verdicts = make_judge(job.judge, max_tokens=job.max_tokens or 16)
        return await judge_targets(verdicts, client, targets)

    def summary(self, rows: Sequence[Any]) -> list[str]:
        typed: list[LabelRow] = list(rows)
        return [label_counts(typed).to_string(index=False)] if typed else []

    def agreement(self, tables: RunTables, judge_a: str, judge_b: str) -> Agreement:
        import pandas as pd

        targets = self.judging.targets(tables, context_turns=0)
        payload: dict[str, Any] = {}
        lines = [f"judges: {judge_a} (rows) vs {judge_b} (columns)"]
        for task in self.judging.tasks:
            keys = target_keys([t for t in targets if t.kind == task.name])
            result = agreement(paired_labels(tables, judge_a, judge_b, keys), judge_a, judge_b)
            confusion: pd.DataFrame = result["confusion"]
            payload[task.name] = {"kind": task.name, **result, "confusion": confusion.to_dict()}
            lines.append(agreement_line(task.name, result))
            if len(confusion):
                lines.append(confusion.to_string())
        relabelling = self._relabelled(tables, judge_a, judge_b) if self._relabelled else None
        if relabelling is not None:
            payload[relabelling.name] = relabelling.as_dict()
            lines += _relabelling_lines(relabelling, judge_a, judge_b)
        return Agreement(payload, lines)


def agreement_line(kind: str, result: dict[str, Any]) -> str:
    """One task's agreement: n, percent agreement, and kappa or why it is missing."""
    skipped = result.get("skipped")
    kappa = f"kappa not computed ({skipped})" if skipped else f"kappa={result['kappa']:.3f}"
    return f"{kind}: n={result['n']}  agreement={result['percent_agreement']:.3f}  {kappa}"


def _relabelling_lines(relabelling: Relabelling, judge_a: str, judge_b: str) -> list[str]:
    transfer = ", ".join(f"{k}: {v:.3f}" for k, v in relabelling.transfer.items())
    lines = [
        f"P({judge_b} = {relabelling.label} | {judge_a} label): {transfer or 'none'}",
        f"{relabelling.unit} without transfer rate: {relabelling.without_transfer}",
    ]
    if len(relabelling.by_cell):
        lines.append(relabelling.by_cell.to_string(index=False))
    return lines
