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
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.judges import JudgeTask, Relabelling
    from backchannel.paradigms import Paradigm

_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


def _run_client(run: Path, models: list[str], concurrency: int | None) -> tuple[Any, Any]:
    """A client for `models` with the run's endpoints, local settings and response cache."""
    from backchannel import _runner
    from backchannel.experiment import Experiment
    from backchannel.store import CACHE_NAME, RunStore

    store = RunStore(run, readonly=True)
    try:
        resolved = store.manifest().get("config_resolved") or {}
    finally:
        store.close()
    known = {"endpoints", "generation", "local", "retry", "max_reasks"}
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
    return _runner.experiment_client(experiment, models, run / CACHE_NAME, concurrency=concurrency)


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
) -> list[Any]:
    """`ask(client)` on a client built from the run's config, closed (with its cache) after."""
    import asyncio

    client, cache = _run_client(run, models, concurrency)

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


def _tasks(paradigm: Paradigm[Any], run: Path | None) -> tuple[JudgeTask, ...]:
    """The paradigm's judge tasks; a paradigm without any is refused."""
    tasks = paradigm.judge_tasks()
    if not tasks:
        where = f"{run} is a {paradigm.name} run" if run else f"a {paradigm.name} run"
        raise ConfigError(
            f"{where}; {paradigm.name} declares no judge tasks, so there is nothing to label "
            "or compare (a paradigm offers them through its `judging` attribute)"
        )
    return tasks


def _chosen_tasks(tasks: tuple[JudgeTask, ...], kind: str, judge: str) -> list[JudgeTask]:
    """The tasks `--kind` names (all of them for `all`), checked against the judge."""
    from backchannel.judges import RULE_MODEL, rule_gaps

    names = [task.name for task in tasks]
    if kind != "all" and kind not in names:
        raise ConfigError(f"--kind {kind!r}: choose {', '.join(names)} or all")
    chosen = [task for task in tasks if kind in ("all", task.name)]
    gaps = rule_gaps(chosen) if judge == RULE_MODEL else []
    if gaps:
        ruled = [task.name for task in chosen if task.name not in gaps]
        fix = f", or --kind {' / '.join(ruled)}" if ruled else ""
        raise ConfigError(
            f"the rule judge has no rule for {', '.join(gaps)} targets; use --judge "
            f"PROVIDER/MODEL{fix}"
        )
    return chosen


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
            help="One of the run's judge tasks (peer_pressure: private, public; dyad: "
            "category; council: rationale), or all.",
        ),
    ] = "all",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --sample draw.")] = 0,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens", min=1, help="Maximum tokens of one verdict (16; testimony claims 1024)."
        ),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="In-flight calls per endpoint.")
    ] = None,
) -> None:
    """Label a stored run's judgeable events (answers, turns, rationales) under a judge name."""
    from backchannel.backends import check_model
    from backchannel.judges import (
        RULE_MODEL,
        judge_targets,
        label_counts,
        make_judge,
        sample_targets,
    )

    if not _NAME.match(name):
        raise ConfigError(f"--as {name!r}: use letters, digits and _ . : - only")
    if judge != RULE_MODEL:
        check_model(judge)
    tables = load_tables(run, None)
    if tables.manifest.get("paradigm") == "testimony":
        if kind == "private":
            raise ConfigError(
                "--kind private: testimony claims are extracted from public statements"
            )
        _extract_citations(run, tables, judge, name, sample, seed, max_tokens or 1024, concurrency)
        return
    paradigm = paradigm_of(tables)
    chosen_tasks = _chosen_tasks(_tasks(paradigm, run), kind, judge)
    try:
        found = paradigm.judge_targets(tables, [task.name for task in chosen_tasks])
        chosen = sample_targets(found, sample, seed)
    except ValueError as error:
        raise ConfigError(f"{run}: {error}") from None
    models = [] if judge == RULE_MODEL else [judge]
    verdicts = make_judge(judge, max_tokens=max_tokens or 16)
    rows = _ask_on_run_client(
        run, models, concurrency, lambda client: judge_targets(verdicts, client, chosen)
    )
    stored = _store_labels(run, name, rows)
    out.print(f"labelled {stored} events of {run} as {name!r} with {judge}")
    if rows:
        out.print(label_counts(rows).to_string(index=False), markup=False, soft_wrap=True)


def agreements(
    paradigm: Paradigm[Any], tables: RunTables, judge_a: str, judge_b: str
) -> dict[str, dict[str, Any]]:
    """Agreement of two judges per judge task, on the task's targets both labelled validly."""
    from backchannel.judges import agreement, paired_labels, target_keys

    targets = paradigm.judge_targets(tables, context_turns=0)
    result: dict[str, dict[str, Any]] = {}
    for task in paradigm.judge_tasks():
        keys = target_keys([t for t in targets if t.kind == task.name])
        pairs = paired_labels(tables, judge_a, judge_b, keys)
        result[task.name] = {"kind": task.name, **agreement(pairs, judge_a, judge_b)}
    return result


def _extract_citations(
    run: Path,
    tables: Any,
    judge: str,
    name: str,
    sample: int | None,
    seed: int,
    max_tokens: int,
    concurrency: int | None,
) -> None:
    """Testimony: store each statement's claims under `name`, from the markup (`rule`) or
    from a model's JSON answer."""
    import random

    from backchannel.judges import RULE_MODEL
    from backchannel.paradigms.testimony import (
        CitationExtractor,
        citation_targets,
        extract_all,
        extraction_counts,
        markup_rows,
    )

    if not name.startswith("citations"):
        raise ConfigError(
            f"--as {name!r}: testimony claims are stored under a name starting "
            "with `citations` (e.g. citations_llm)"
        )
    chosen = citation_targets(tables)
    if sample is not None:
        chosen = random.Random(seed).sample(chosen, min(sample, len(chosen)))
    if judge == RULE_MODEL:
        rows = markup_rows(chosen)
    else:
        extractor = CitationExtractor(judge, max_tokens=max_tokens)
        rows = _ask_on_run_client(
            run, [judge], concurrency, lambda client: extract_all(extractor, client, chosen)
        )
    stored = _store_labels(run, name, rows)
    out.print(f"labelled {stored} statements of {run} as {name!r} with {judge}")
    for status, count in extraction_counts(rows).items():
        out.print(f"  {status}: {count}", markup=False)


def _print_agreement(result: dict[str, Any]) -> None:
    skipped = result.get("skipped")
    kappa = f"kappa not computed ({skipped})" if skipped else f"kappa={result['kappa']:.3f}"
    out.print(
        f"{result['kind']}: n={result['n']}  agreement={result['percent_agreement']:.3f}  {kappa}",
        markup=False,
        soft_wrap=True,
    )
    confusion: pd.DataFrame = result["confusion"]
    if len(confusion):
        out.print(confusion.to_string(), markup=False, soft_wrap=True)


def _print_relabelling(relabelling: Relabelling, judge_a: str, judge_b: str) -> None:
    transfer = ", ".join(f"{k}: {v:.3f}" for k, v in relabelling.transfer.items())
    out.print(
        f"P({judge_b} = {relabelling.label} | {judge_a} label): {transfer or 'none'}",
        markup=False,
        soft_wrap=True,
    )
    out.print(f"{relabelling.unit} without transfer rate: {relabelling.without_transfer}")
    if len(relabelling.by_cell):
        out.print(relabelling.by_cell.to_string(index=False), markup=False, soft_wrap=True)


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
    import json

    from backchannel.analysis import jsonable

    tables = load_tables(run, tables_dir)
    judges = set(tables.labels["judge"]) if len(tables.labels) else set()
    missing = [j for j in (judge_a, judge_b) if j not in judges]
    if missing:
        raise ConfigError(
            f"no labels of judge {', '.join(missing)}; judges in the run: "
            f"{', '.join(sorted(judges)) or 'none'} (add some with `backchannel judge`)"
        )
    if tables.manifest.get("paradigm") == "testimony":
        from backchannel.paradigms.testimony import citation_agreement

        found = citation_agreement(tables, judge_a, judge_b)
        if as_json:
            out.print(json.dumps(found), markup=False, highlight=False, soft_wrap=True)
        else:
            for name, value in found.items():
                out.print(f"{name}: {value}", markup=False)
        return
    paradigm = paradigm_of(tables)
    _tasks(paradigm, run)
    try:
        by_kind = agreements(paradigm, tables, judge_a, judge_b)
    except ValueError as error:
        raise ConfigError(f"{run or tables_dir}: {error}") from None
    relabelling = paradigm.relabelled(tables, judge_a, judge_b)
    if as_json:
        payload: dict[str, Any] = {
            k: {**r, "confusion": r["confusion"].to_dict()} for k, r in by_kind.items()
        }
        if relabelling is not None:
            payload[relabelling.name] = relabelling.as_dict()
        text = json.dumps(jsonable(payload))
        out.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    out.print(f"judges: {judge_a} (rows) vs {judge_b} (columns)")
    for result in by_kind.values():
        _print_agreement(result)
    if relabelling is not None:
        _print_relabelling(relabelling, judge_a, judge_b)
