"""The run's first stage: expand the design into conversations (all of them, or `--limit` spread
over the cells) and estimate the calls they will make, before anything is checked or written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backchannel.engine import ConversationSpec
from backchannel.experiment import LoadedExperiment, cell_settings, expand_design
from backchannel.paradigms import CallEstimate, SkippedItem


@dataclass
class Plan:
    """What a run will do: its conversations, which are already stored, and its call estimate."""

    loaded: LoadedExperiment
    specs: list[ConversationSpec]
    done: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    settings_by_cell: dict[str, Any] = field(default_factory=dict)
    """Each cell's resolved settings, by cell key."""
    skipped: list[SkippedItem] = field(default_factory=list)
    """The rows of the data that became no item, each with its reason."""

    @property
    def todo(self) -> list[tuple[int, ConversationSpec]]:
        return [(i, s) for i, s in enumerate(self.specs) if s.conversation_id not in self.done]

    def estimate(self, only_todo: bool = True) -> dict[str, Any]:
        calls: dict[str, int] = {}
        prompt = completion = 0
        specs = [s for _, s in self.todo] if only_todo else self.specs
        for spec in specs:
            estimate: CallEstimate = self.loaded.paradigm.estimate(
                self.settings_by_cell[spec.cell_key], spec.item, replicate=spec.replicate
            )
            for model, count in estimate.calls.items():
                calls[model] = calls.get(model, 0) + count
            prompt += estimate.prompt_tokens
            completion += estimate.completion_tokens
        return {
            "conversations": len(specs),
            "calls": sum(calls.values()),
            "calls_by_model": calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "shared_calls": self.shared_calls(specs),
        }

    def shared_calls(self, specs: list[ConversationSpec]) -> int | None:
        """Calls of these conversations that another arm of their pair makes alike (made once,
        answered from the cache in the other arm): 0 without paired arms; None when it cannot
        be predicted here."""
        from backchannel.orchestration._sharing import predict_shared

        return predict_shared(self.loaded, specs, self.settings_by_cell)


def spread(specs: list[ConversationSpec], limit: int) -> list[ConversationSpec]:
    """The first `limit` conversations taken round robin over cells (each cell's first
    conversation, then each cell's second, ...), so a quick look covers every condition; the
    chosen ones keep the design's order."""
    by_cell: dict[str, list[int]] = {}
    for index, spec in enumerate(specs):
        by_cell.setdefault(spec.cell_key, []).append(index)
    queues = list(by_cell.values())
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)][: limit - len(chosen)]
        depth += 1
    return [specs[i] for i in sorted(chosen)]


def plan(loaded: LoadedExperiment, limit: int | None = None) -> Plan:
    """The run's conversations (the first `limit`, spread over the cells), their cells' resolved
    settings and the models they call."""
    resolved = cell_settings(loaded)
    design = expand_design(loaded, resolved)
    specs = design.specs
    if limit is not None:
        specs = spread(specs, limit)
    models: set[str] = set()
    for key in {s.cell_key for s in specs}:
        models |= loaded.paradigm.models(resolved[key])
    return Plan(loaded, specs, models=models, settings_by_cell=resolved, skipped=design.skipped)
