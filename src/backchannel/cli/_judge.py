"""`backchannel judge` and `agree`: label a stored run's judgeable events under a judge name, and
compare two judges, for every paradigm that declares judge tasks."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from backchannel.cli._common import err, friendly_errors, load_tables, out, paradigm_of
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.judges import Labelling
    from backchannel.paradigms import Paradigm

_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


def _run_client(
    run: Path, models: list[str], concurrency: int | None, paradigm: Paradigm[Any] | None = None
) -> tuple[Any, Any]:
    """A client for `models` with the run's endpoints, local settings and response cache, and
    its paradigm's simulated population under the run's parameters."""
    from backchannel import orchestration
    from backchannel.experiment import Experiment
    from backchannel.store import CACHE_NAME, RunStore

    store = RunStore(run, readonly=True)
    try:
        resolved = store.manifest().get("config_resolved") or {}
    finally:
        store.close()
    known = {"endpoints", "generation", "local", "retry", "max_reasks", "population"}
    config = {key: value for key, value in resolved.items() if key in known}
    config, dropped = _without_redacted(config)
    if dropped:
        err.print(
            f"note: {', '.join(dropped)} held a secret, which the run does not store; the "
            "judge's calls go without it",
            markup=False,
            soft_wrap=True,
        )
    experiment = Experiment.model_validate({"name": "judge", "paradigm": "-", **config})
    rules = None if paradigm is None else paradigm.population_book()
    if rules is not None and experiment.population is not None:
        population = rules.readable(experiment.population)
        experiment = experiment.model_copy(update={"population": population})
    return orchestration.experiment_client(
        experiment, models, run / CACHE_NAME, concurrency=concurrency, population_rules=rules
    )


def _without_redacted(value: Any, where: str = "") -> tuple[Any, list[str]]:
    """The stored config without the fields whose secret was redacted, and where they were."""
    from backchannel._secrets import REDACTED

    dropped: list[str] = []
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if item == REDACTED:
                dropped.append(path)
                continue
            kept[key], inner = _without_redacted(item, path)
            dropped += inner
        return kept, dropped
    if isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            if item == REDACTED:
                dropped.append(f"{where}.{index}")
                continue
            kept_item, inner = _without_redacted(item, f"{where}.{index}")
            items.append(kept_item)
            dropped += inner
        return items, dropped
    return value, dropped


def _ask_on_run_client(
    run: Path,
    models: list[str],
    concurrency: int | None,
    ask: Callable[[Any], Awaitable[list[Any]]],
    paradigm: Paradigm[Any] | None = None,
) -> list[Any]:
    """`ask(client)` on a client built from the run's config, closed (with its cache) after."""
    import asyncio

    client, cache = _run_client(run, models, concurrency, paradigm)

    async def main() -> list[Any]:
        try:
            return await ask(client)
        finally:
            await client.aclose()

    try:
        return asyncio.run(main())
    finally:
        cache.close()


def _store_labels(run: Path, name: str, rows: list[Any]) -> int:
    """Store `rows` as labels of judge `name` under the run's lock; returns how many."""
    from backchannel.store import RunStore

    store = RunStore(run)
    try:
        store.lock()
        return store.add_labels(name, rows)
    finally:
        store.close()


def _labelling(paradigm: Paradigm[Any], run: Path | None) -> Labelling:
    """The paradigm's judging; a paradigm without any is refused."""
    labelling = paradigm.labelling()
    if labelling is None:
        where = f"{run} is a {paradigm.name} run" if run else f"a {paradigm.name} run"
        raise ConfigError(
            f"{where}; {paradigm.name} declares no judge tasks, so there is nothing to label "
            "or compare (a paradigm offers them through its `judging` attribute)"
        )
    return labelling


@friendly_errors
def judge_command(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    judge: Annotated[
        str,
        typer.Option("--judge", help="The judge: PROVIDER/MODEL, or `rule` for the rule judge."),
    ],
    name: Annotated[str, typer.Option("--as", help="The name the labels are stored under.")],
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="Label only N events, drawn at random.")
    ] = None,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="One of the kinds of judging the run's paradigm offers (docs/judges.md), or all.",
        ),
    ] = "all",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --sample draw.")] = 0,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            min=1,
            help="Maximum tokens of one verdict (default: the kind's own, 16 for a label).",
        ),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="In-flight calls per endpoint.")
    ] = None,
) -> None:
    """Label a stored run's judgeable events (answers, turns, rationales) under a judge name."""
    from backchannel.backends import check_model
    from backchannel.judges import RULE_MODEL, LabelJob

    if not _NAME.match(name):
        raise ConfigError(f"--as {name!r}: use letters, digits and _ . : - only")
    if judge != RULE_MODEL:
        check_model(judge)
    tables = load_tables(run, None)
    paradigm = paradigm_of(tables)
    labelling = _labelling(paradigm, run)
    job = LabelJob(kind, judge, name, sample, seed, max_tokens)
    try:
        chosen = labelling.targets(tables, job)
    except ValueError as error:
        raise ConfigError(f"{run}: {error}") from None
    rows = _ask_on_run_client(
        run,
        labelling.models(job),
        concurrency,
        lambda client: labelling.label(chosen, job, client),
        paradigm,
    )
    stored = _store_labels(run, name, rows)
    out.print(f"labelled {stored} {labelling.unit} of {run} as {name!r} with {judge}")
    for line in labelling.summary(rows):
        out.print(line, markup=False, soft_wrap=True)


@friendly_errors
def agree_command(
    run: Annotated[Path | None, typer.Argument(help="The run directory.")],
    judge_a: Annotated[str, typer.Argument(help="The first judge (rows of the confusion table).")],
    judge_b: Annotated[str, typer.Argument(help="The second judge (columns).")],
    tables_dir: Annotated[
        Path | None, typer.Option("--tables", help="Read exported tables from this directory.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Agreement of two judges per judge task (percent, Cohen's kappa, confusion), and the
    paradigm's outcome re-weighted by how B relabels A (peer pressure: FPI)."""
    tables = load_tables(run, tables_dir)
    judges = set(tables.labels["judge"]) if len(tables.labels) else set()
    missing = [j for j in (judge_a, judge_b) if j not in judges]
    if missing:
        raise ConfigError(
            f"no labels of judge {', '.join(missing)}; judges in the run: "
            f"{', '.join(sorted(judges)) or 'none'} (add some with `backchannel judge`)"
        )
    labelling = _labelling(paradigm_of(tables), run)
    try:
        found = labelling.agreement(tables, judge_a, judge_b)
    except ValueError as error:
        raise ConfigError(f"{run or tables_dir}: {error}") from None
    if as_json:
        out.print(found.as_json(), markup=False, highlight=False, soft_wrap=True)
        return
    for line in found.lines:
        out.print(line, markup=False, soft_wrap=True)
