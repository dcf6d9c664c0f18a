"""Designs are data: factors and levels expand here, and only here, into conversation specs."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

from backchannel.engine import ConversationSpec, Item
from backchannel.errors import ConfigError
from backchannel.experiment._load import LoadedExperiment
from backchannel.experiment._schema import same_level
from backchannel.paradigms import SkippedItem, skipped_of
from backchannel.seeding import derive_seed


def cell_key(cell: dict[str, Any]) -> str:
    """`factor=level;...` sorted by factor name: a readable, stable name of a cell."""
    return ";".join(
        f"{name}={json.dumps(cell[name]) if not isinstance(cell[name], str) else cell[name]}"
        for name in sorted(cell)
    )


def expand_cells(
    factors: dict[str, list[Any]], exclude: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """All combinations of levels, in declaration order, minus the excluded partial combinations."""
    for rule in exclude:
        unknown = set(rule) - set(factors)
        if unknown:
            raise ConfigError(
                f"exclude names unknown factors {sorted(unknown)}; factors are {sorted(factors)}"
            )
    names = list(factors)
    cells = [
        dict(zip(names, levels, strict=True)) for levels in itertools.product(*factors.values())
    ]
    return [
        c
        for c in cells
        if not any(all(same_level(c[k], v) for k, v in rule.items()) for rule in exclude)
    ]


def combinations(loaded: LoadedExperiment) -> int:
    """How many combinations of levels the factors make (before exclusions), counted without
    listing them."""
    return math.prod(len(levels) for levels in loaded.experiment.factors.values())


def _too_large(loaded: LoadedExperiment, size: str) -> ConfigError:
    ceiling = loaded.experiment.max_conversations
    return ConfigError(
        f"{loaded.path}: the design is too large to run: {size}, above max_conversations "
        f"({ceiling:,}); use fewer levels, items or replicates, or raise max_conversations in the "
        "experiment file"
    )


def check_combinations(loaded: LoadedExperiment) -> None:
    """Refuse a design whose factors make more combinations than `max_conversations`, before
    any is listed (twenty factors of ten levels are 10^20 combinations)."""
    count = combinations(loaded)
    if count > loaded.experiment.max_conversations:
        shape = " x ".join(f"{len(v):,}" for v in loaded.experiment.factors.values())
        raise _too_large(loaded, f"its factors make {count:,} combinations of levels ({shape})")


def cell_settings(loaded: LoadedExperiment) -> dict[str, Any]:
    """Each cell's resolved settings, by cell key: its levels override the settings of the same
    names, validated by the paradigm's Settings (one factor rule for every paradigm)."""
    check_combinations(loaded)
    experiment, paradigm = loaded.experiment, loaded.paradigm
    try:
        paradigm.check_factors(list(experiment.factors))
    except ConfigError as error:
        raise ConfigError(f"{loaded.path}: {error}") from None
    resolved: dict[str, Any] = {}
    seen: dict[str, dict[str, Any]] = {}
    for cell in expand_cells(experiment.factors, experiment.exclude):
        key = cell_key(cell)
        other = seen.setdefault(key, cell)
        if other is not cell:
            raise ConfigError(
                f"{loaded.path}: factors: cells {other} and {cell} have the same name {key!r} "
                '(levels like 1 and "1" read the same); make the levels distinct'
            )
        try:
            resolved[key] = paradigm.resolve(cell, loaded.settings)
        except ConfigError as error:
            message = str(error)
            prefix = "" if message.startswith("factors") else "factors: "
            raise ConfigError(f"{loaded.path}: {prefix}{message}") from None
    return resolved


@dataclass(frozen=True)
class Expansion:
    """A design expanded: its conversations, and the rows of its data that became none."""

    specs: list[ConversationSpec]
    skipped: list[SkippedItem] = field(default_factory=list)


def expand(
    loaded: LoadedExperiment, resolved: dict[str, Any] | None = None
) -> list[ConversationSpec]:
    """cells x items x replicates, each with a seed derived from the experiment seed."""
    return expand_design(loaded, resolved).specs


def expand_design(loaded: LoadedExperiment, resolved: dict[str, Any] | None = None) -> Expansion:
    """`expand`, with the rows of the paradigm's data that became no item (each with its
    reason), so a run names every row that does not become a conversation."""
    experiment, paradigm, settings = loaded.experiment, loaded.paradigm, loaded.settings
    if resolved is None:
        resolved = cell_settings(loaded)
    check_combinations(loaded)
    cells = expand_cells(experiment.factors, experiment.exclude)
    try:
        items: list[Item] = paradigm.items(settings, experiment.seed)
    except (ValueError, OSError, ConfigError) as error:  # a malformed row, a missing file
        message = str(error)
        if message.startswith(str(loaded.path)):
            raise
        raise ConfigError(f"{loaded.path}: settings: {message}") from None
    skipped = skipped_of(items)
    if experiment.items_limit is not None:
        items = items[: experiment.items_limit]
        skipped = [s for s in skipped if s.kept_before < experiment.items_limit]
    if not items:
        raise ConfigError(f"{loaded.path}: the experiment has no items")
    seen_ids: set[str] = set()
    for item in items:
        if item.item_id in seen_ids:
            raise ConfigError(
                f"{loaded.path}: settings: item id {item.item_id!r} appears twice; give every "
                "question, row or scenario its own id (conversations are stored by id)"
            )
        seen_ids.add(item.item_id)
    paired = pair_factors(loaded)
    by_cell = []
    for cell in cells:
        key = cell_key(cell)
        try:
            by_cell.append((cell, key, paradigm.items_for_cell(resolved[key], items)))
        except ConfigError as error:
            raise ConfigError(f"{loaded.path}: factors: {error}") from None
    # Counted before any is made: `replicates: 1000000000` is refused, not listed.
    total = sum(
        len(cell_items) * experiment.replicates_for(cell) for cell, _, cell_items in by_cell
    )
    if total > experiment.max_conversations:
        most = max(experiment.replicates_for(cell) for cell, _, _ in by_cell)
        raise _too_large(
            loaded,
            f"{total:,} conversations ({len(by_cell):,} cells, {len(items):,} items, up to "
            f"{most:,} replicates)",
        )
    specs = []
    for cell, key, cell_items in by_cell:
        common = cell_key({name: level for name, level in cell.items() if name not in paired})
        for item in cell_items:
            for replicate in range(experiment.replicates_for(cell)):
                conversation_id = f"{key or 'all'}/{item.item_id}/{replicate}"
                specs.append(
                    ConversationSpec(
                        conversation_id=conversation_id,
                        paradigm=experiment.paradigm,
                        cell=dict(cell),
                        cell_key=key,
                        item=item,
                        replicate=replicate,
                        seed=derive_seed(experiment.seed, conversation_id),
                        call_seed=derive_seed(
                            experiment.seed, "pair", common, item.item_id, replicate
                        )
                        if paired
                        else None,
                    )
                )
    return Expansion(specs, skipped)


def pair_factors(loaded: LoadedExperiment) -> frozenset[str]:
    """The factors of this design whose levels are arms of a pair (the paradigm's paired
    factors that the design varies), or none when `share_paired_calls` is off."""
    experiment = loaded.experiment
    if not experiment.share_paired_calls:
        return frozenset()
    return frozenset(experiment.factors) & loaded.paradigm.paired_factors
