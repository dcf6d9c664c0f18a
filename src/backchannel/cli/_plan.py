"""`backchannel plan EXPERIMENT.yaml`: the conversations per cell each headline contrast needs
for a target interval half-width or power, from a pilot run or stated rates, and the calls,
tokens and cost that design implies (the dry run's estimate). No model is called."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from backchannel.cli._common import friendly_errors, load_tables, out, paradigm_of
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.experiment import LoadedExperiment
    from backchannel.planning import Contrast, PlanRow, Target, Units


SIMULATED_RUNS = 400


@friendly_errors
def plan_command(
    experiment: Annotated[Path, typer.Argument(help="The experiment file (YAML).")],
    pilot: Annotated[
        Path | None,
        typer.Option("--pilot", help="A stored pilot run: its observed rates, sds and ICC."),
    ] = None,
    halfwidth: Annotated[
        float | None,
        typer.Option("--halfwidth", help="Target half-width of each contrast's 95 % interval."),
    ] = None,
    power: Annotated[
        float | None,
        typer.Option(
            "--power", help="Target power against --effect, or the pilot's difference (0.8)."
        ),
    ] = None,
    effect: Annotated[
        float | None,
        typer.Option("--effect", help="The difference (first arm minus second) to size for."),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided test level.")] = 0.05,
    assume: Annotated[
        list[str] | None,
        typer.Option(
            "--assume",
            help="A stated rate or spread: NAME.KEY=VALUE (keys: first, second, sd, sd_first, "
            "sd_second, icc, trials, correlation); repeat it.",
        ),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge whose labels the pilot is read with.")
    ] = None,
    simulate: Annotated[
        int | None,
        typer.Option(
            "--simulate",
            min=0,
            help="With --pilot: simulated runs per size drawn from its conversations, which "
            "size the design (default 400; 0: closed forms only).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated runs.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Size a design before paying for it: conversations per cell for each headline contrast."""
    from backchannel.experiment import load_experiment
    from backchannel.planning import Target

    try:
        target = Target(halfwidth=halfwidth, power=power, effect=effect, alpha=alpha)
    except ValueError as error:
        raise ConfigError(f"{error} (--halfwidth W, or --power P --effect E)") from None
    if pilot is None and simulate is not None:
        raise ConfigError("--simulate draws runs from a pilot's conversations: give --pilot RUN")
    if power is not None and effect is None and pilot is None:
        raise ConfigError(
            "--power needs the effect it is the power against: give --effect E, or a pilot run "
            "whose observed difference it is (--pilot RUN)"
        )
    loaded = load_experiment(experiment)
    contrasts = loaded.paradigm.contrasts(loaded.experiment.factors)
    if not contrasts:
        raise ConfigError(
            f"{experiment}: this design has no headline contrast of the {loaded.paradigm.name} "
            "paradigm (its factors lack the arms' levels; docs/statistics.md lists each "
            "paradigm's contrasts and the levels they need)"
        )
    left_out: list[str] = []
    rows = _rows(
        loaded,
        contrasts,
        target,
        pilot,
        assume or [],
        judge,
        (SIMULATED_RUNS if simulate is None else simulate, seed),
        left_out,
    )
    summary = _summary(loaded, rows)
    titles = {c.name: c.title for c in contrasts}
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "rows": [r.as_dict() for r in rows],
                    "contrasts": titles,
                    "left_out": left_out,
                    **summary,
                }
            )
        )
        return
    _print(loaded, rows, summary, target, titles)
    for note in left_out:
        out.print(f"left out: {note}")


def _cells(loaded: LoadedExperiment) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Each cell's levels over its resolved settings, and each cell's items."""
    from backchannel import orchestration

    base = orchestration.plan(loaded)
    cells: dict[str, dict[str, Any]] = {}
    items: dict[str, set[str]] = {}
    for spec in base.specs:
        if spec.cell_key not in cells:
            settings = base.settings_by_cell[spec.cell_key].model_dump(mode="json")
            cells[spec.cell_key] = {**settings, **spec.cell}
        items.setdefault(spec.cell_key, set()).add(spec.item.item_id)
    return list(cells.values()), {k: len(v) for k, v in items.items()}


def _rows(
    loaded: LoadedExperiment,
    contrasts: tuple[Contrast, ...],
    target: Target,
    pilot: Path | None,
    assume: list[str],
    judge: str | None,
    simulation: tuple[int, int],
    left_out: list[str],
) -> list[PlanRow]:
    """The plan's rows; a pilot's strata are sized by simulation from its conversations
    (`simulation`: runs per size and seed; 0 runs, or a stated effect: closed forms). A pilot
    stratum that no cell of this design runs is named in `left_out` with its reason."""
    from backchannel.paradigms import AnalysisOptions
    from backchannel.planning import (
        Assumption,
        AssumptionError,
        arm_cells,
        contrast_units,
        estimate_contrast,
        parse_stated,
        pilot_assumption,
        plan_row,
        stated_assumption,
        stratum_shares,
    )

    cells, _ = _cells(loaded)
    names = [c.name for c in contrasts]
    try:
        stated = parse_stated(assume, names)
    except AssumptionError as error:
        raise ConfigError(str(error)) from None
    tables = None
    if pilot is not None:
        tables = load_tables(pilot, None)
        if paradigm_of(tables).name != loaded.paradigm.name:
            raise ConfigError(
                f"--pilot {pilot}: a {paradigm_of(tables).name} run; this experiment is "
                f"{loaded.paradigm.name}"
            )
    rows: list[PlanRow] = []
    runs, seed = simulation
    for contrast in contrasts:
        pool: Units | None = None
        read: Units | None = None
        try:
            strata: list[tuple[dict[str, Any], Assumption]]
            if contrast.name in stated or tables is None:
                strata = [({}, stated_assumption(contrast, stated.get(contrast.name, {})))]
            else:
                units = contrast_units(contrast, tables, AnalysisOptions(judge=judge))
                pool, read = (units if runs else None), units
                reading = estimate_contrast(contrast, units)
                if not reading.rows:
                    raise ConfigError(
                        f"--pilot {pilot}: no stratum of {contrast.name} has conversations in "
                        f"both arms ({contrast.label()}); run a pilot with both, or state the "
                        f"rates (--assume {contrast.name}.first=... {contrast.name}.second=...)"
                    )
                strata = [(r.stratum, pilot_assumption(contrast, r)) for r in reading.rows]
            for stratum, assumption in strata:
                counts = arm_cells(contrast, cells, stratum)
                if 0 in counts:
                    where = ", ".join(f"{k}={v}" for k, v in stratum.items()) or "all"
                    left_out.append(
                        f"{contrast.name} ({where}): the pilot has this stratum but no cell of "
                        "this design runs it in both arms, so it is not sized"
                    )
                    continue
                shares = (
                    (1.0, 1.0) if read is None else stratum_shares(contrast, read, stratum, cells)
                )
                rows.append(
                    plan_row(
                        contrast,
                        stratum,
                        assumption,
                        target,
                        counts,
                        pilot=pool,
                        runs=runs,
                        seed=seed,
                        shares=shares,
                    )
                )
        except (AssumptionError, ValueError) as error:
            raise ConfigError(str(error)) from None
    if not rows:
        raise ConfigError(
            "no stratum of the pilot's contrasts is a stratum of this design"
            + (f" ({'; '.join(left_out)})" if left_out else "")
        )
    return rows


def _summary(loaded: LoadedExperiment, rows: list[PlanRow]) -> dict[str, Any]:
    """The replicates the largest requirement needs, and the dry run's estimate at them."""
    from backchannel import orchestration

    cells, items = _cells(loaded)
    per_cell = max(r.per_cell for r in rows)
    fewest = min(items.values()) if items else 1
    replicates = max(1, math.ceil(per_cell / fewest))
    experiment = loaded.experiment.model_copy(
        update={"replicates": replicates, "replicates_by": []}
    )
    sized = dataclasses.replace(loaded, experiment=experiment)
    estimate = orchestration.plan(sized).estimate(only_todo=False)
    return {
        "conversations_per_cell": per_cell,
        "items_per_cell": fewest,
        "replicates": replicates,
        "cells": len(cells),
        "conversations": estimate["conversations"],
        "calls": estimate["calls"],
        "calls_by_model": estimate["calls_by_model"],
        "prompt_tokens": estimate["prompt_tokens"],
        "completion_tokens": estimate["completion_tokens"],
        "shared_calls": estimate["shared_calls"],
        "cost": _cost(loaded, estimate),
    }


def _cost(loaded: LoadedExperiment, estimate: dict[str, Any]) -> float | None:
    """US dollars at the endpoints' prices, the tokens split over models by their calls (the
    estimate counts tokens for the whole design); None when no endpoint has a price."""
    calls = estimate["calls"] or 1
    total, priced = 0.0, False
    for model, count in estimate["calls_by_model"].items():
        endpoint = next(
            (e for e in loaded.experiment.endpoints if fnmatch.fnmatchcase(model, e.models)), None
        )
        if endpoint is None:
            continue
        price = endpoint.price
        if price.prompt_per_million or price.completion_per_million:
            priced = True
            share = count / calls
            total += price.cost(
                round(estimate["prompt_tokens"] * share),
                round(estimate["completion_tokens"] * share),
            )
    return total if priced else None


def _print(
    loaded: LoadedExperiment,
    rows: list[PlanRow],
    summary: dict[str, Any],
    target: Target,
    titles: dict[str, str],
) -> None:
    from rich.console import Console
    from rich.table import Table

    aim = (
        f"half-width {target.halfwidth:g}"
        if target.halfwidth is not None
        else f"power {target.power:g} at "
        + ("the pilot's difference" if target.effect is None else f"effect {target.effect:g}")
        + f" (alpha {target.alpha:g})"
    )
    out.print(f"plan for {loaded.experiment.name!r} ({loaded.experiment.paradigm}): {aim}")
    table = Table(show_edge=False)
    for column in (
        "contrast",
        "stratum",
        "from",
        "first",
        "second",
        "sd",
        "per arm",
        "per cell",
        "half-width",
        "power",
        "method",
    ):
        table.add_column(column, no_wrap=True)
    for row in rows:
        a = row.assumption
        stratum = ", ".join(f"{k}={v}" for k, v in row.stratum.items()) or "all"
        table.add_row(
            row.contrast,
            stratum,
            a.source,
            f"{a.first:.3g}",
            f"{a.second:.3g}",
            f"{a.spread:.3g}",
            str(row.units),
            str(row.per_cell),
            f"{row.halfwidth:.3g}",
            "-" if row.power is None else f"{row.power:.2f}",
            row.method
            + ("" if row.closed_units is None else f" (closed form: {row.closed_units})"),
        )
    Console(highlight=False, width=max(out.width, 160)).print(table)
    for name in dict.fromkeys(r.contrast for r in rows):
        out.print(f"{name}: {titles[name]}")
    out.print(
        f"conversations per cell: {summary['conversations_per_cell']} "
        f"({summary['items_per_cell']} items per cell x {summary['replicates']} replicates)"
    )
    out.print(f"design: {summary['cells']} cells, {summary['conversations']} conversations")
    out.print(f"estimated calls: {summary['calls']}")
    for name, calls in sorted(summary["calls_by_model"].items()):
        out.print(f"  {name}: {calls}")
    out.print(
        f"estimated tokens: {summary['prompt_tokens']} prompt, "
        f"{summary['completion_tokens']} completion"
    )
    if summary["shared_calls"]:
        out.print(f"calls shared by paired arms: {summary['shared_calls']} (made once)")
    if summary["cost"] is not None:
        out.print(f"estimated cost: ${summary['cost']:.2f} at the endpoints' prices")
