"""Designs are data: factors and levels expand here, and only here, into conversation specs."""

from __future__ import annotations

import itertools
import json
from typing import Any

from backchannel.engine import ConversationSpec, Item
from backchannel.errors import ConfigError
from backchannel.experiment._load import LoadedExperiment
from backchannel.experiment._schema import same_level
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


def cell_settings(loaded: LoadedExperiment) -> dict[str, Any]:
    """Each cell's resolved settings, by cell key: its levels override the settings of the same
    names, validated by the paradigm's Settings (one factor rule for every paradigm)."""
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


def expand(
    loaded: LoadedExperiment, resolved: dict[str, Any] | None = None
) -> list[ConversationSpec]:
    """cells x items x replicates, each with a seed derived from the experiment seed."""
    experiment, paradigm, settings = loaded.experiment, loaded.paradigm, loaded.settings
    if resolved is None:
        resolved = cell_settings(loaded)
    cells = expand_cells(experiment.factors, experiment.exclude)
    try:
        items: list[Item] = paradigm.items(settings, experiment.seed)
    except (ValueError, OSError) as error:  # a malformed dataset row, a missing data file
        raise ConfigError(f"{loaded.path}: settings: {error}") from None
    if experiment.items_limit is not None:
        items = items[: experiment.items_limit]
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
    specs = []
    for cell in cells:
        key = cell_key(cell)
        common = cell_key({name: level for name, level in cell.items() if name not in paired})
        try:
            cell_items = paradigm.items_for_cell(resolved[key], items)
        except ConfigError as error:
            raise ConfigError(f"{loaded.path}: factors: {error}") from None
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
    return specs


def pair_factors(loaded: LoadedExperiment) -> frozenset[str]:
    """The factors of this design whose levels are arms of a pair (the paradigm's paired
    factors that the design varies), or none when `share_paired_calls` is off."""
    experiment = loaded.experiment
    if not experiment.share_paired_calls:
        return frozenset()
    return frozenset(experiment.factors) & loaded.paradigm.paired_factors
