"""`backchannel judge`, `agree` and `screen`: label a stored run, compare two judges, and keep
the items a model answers correctly on its own."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from backchannel.cli._common import err, friendly_errors, load_tables, out
from backchannel.errors import ConfigError

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
    experiment = Experiment.model_validate({"name": "judge", "paradigm": "-", **config})
    return _runner.experiment_client(experiment, models, run / CACHE_NAME, concurrency=concurrency)


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
        str, typer.Option("--kind", help="private, public or all (honest agents' events).")
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
    """Label a stored run's private answers and public turns under another judge name."""
    from backchannel.backends import check_model
    from backchannel.judges import RULE_MODEL, judge_targets, label_counts, make_judge, targets
    from backchannel.store import RunStore

    if not _NAME.match(name):
        raise ConfigError(f"--as {name!r}: use letters, digits and _ . : - only")
    if kind not in ("private", "public", "all"):
        raise ConfigError(f"--kind {kind!r}: choose private, public or all")
    if judge != RULE_MODEL:
        check_model(judge)
    tables = load_tables(run, None)
    paradigm = tables.manifest.get("paradigm")
    if paradigm == "testimony":
        if kind == "private":
            raise ConfigError(
                "--kind private: testimony claims are extracted from public statements"
            )
        _extract_citations(run, tables, judge, name, sample, seed, max_tokens or 1024, concurrency)
        return
    if paradigm != "peer_pressure":
        raise ConfigError(
            f"{run} is a {paradigm} run; `backchannel judge` labels the factual answers and "
            "turns of peer_pressure runs"
        )
    try:
        chosen = targets(tables, kind, sample=sample, seed=seed)  # type: ignore[arg-type]
    except ValueError as error:
        raise ConfigError(f"{run}: {error}") from None
    models = [] if judge == RULE_MODEL else [judge]
    client, cache = _run_client(run, models, concurrency)

    async def main() -> list[Any]:
        try:
            return await judge_targets(
                make_judge(judge, max_tokens=max_tokens or 16), client, chosen
            )
        finally:
            await client.aclose()

    try:
        rows = asyncio.run(main())
    finally:
        cache.close()
    store = RunStore(run)
    try:
        store.lock()
        stored = store.add_labels(name, rows)
    finally:
        store.close()
    out.print(f"labelled {stored} events of {run} as {name!r} with {judge}")
    if rows:
        out.print(label_counts(rows).to_string(index=False), markup=False, soft_wrap=True)


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
    from backchannel.store import RunStore

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
        client, cache = _run_client(run, [judge], concurrency)

        async def main() -> list[Any]:
            try:
                extractor = CitationExtractor(judge, max_tokens=max_tokens)
                return await extract_all(extractor, client, chosen)
            finally:
                await client.aclose()

        try:
            rows = asyncio.run(main())
        finally:
            cache.close()
    store = RunStore(run)
    try:
        store.lock()
        stored = store.add_labels(name, rows)
    finally:
        store.close()
    out.print(f"labelled {stored} statements of {run} as {name!r} with {judge}")
    for status, count in extraction_counts(rows).items():
        out.print(f"  {status}: {count}", markup=False)


def _print_agreement(result: dict[str, Any]) -> None:
    skipped = result.get("skipped")
    kappa = f"kappa not computed ({skipped})" if skipped else f"kappa={result['kappa']:.3f}"
    out.print(
        f"{result['channel']}: n={result['n']}  agreement={result['percent_agreement']:.3f}  "
        f"{kappa}",
        markup=False,
        soft_wrap=True,
    )
    confusion: pd.DataFrame = result["confusion"]
    if len(confusion):
        out.print(confusion.to_string(), markup=False, soft_wrap=True)


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
    """Agreement of two judges (percent, Cohen's kappa, confusion) and FPI reweighted by B."""
    import json

    from backchannel.paradigms.peer_pressure import jsonable, judge_agreement, reweighted_fpi

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
    channels = {c: judge_agreement(tables, judge_a, judge_b, c) for c in ("private", "public")}
    reweighted = reweighted_fpi(tables, judge_a, judge_b)
    if as_json:
        payload = {c: {**r, "confusion": r["confusion"].to_dict()} for c, r in channels.items()}
        text = json.dumps(jsonable({**payload, "reweighted_fpi": reweighted}))
        out.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    out.print(f"judges: {judge_a} (rows) vs {judge_b} (columns)")
    for result in channels.values():
        _print_agreement(result)
    transfer = ", ".join(f"{k}: {v:.3f}" for k, v in reweighted["transfer"].items())
    out.print(
        f"P({judge_b} = manipulated | {judge_a} label): {transfer or 'none'}",
        markup=False,
        soft_wrap=True,
    )
    out.print(f"agents without transfer rate: {reweighted['agents_without_transfer']}")
    by_cell = reweighted["by_cell"]
    if isinstance(by_cell, pd.DataFrame) and len(by_cell):
        out.print(by_cell.to_string(index=False), markup=False, soft_wrap=True)


@friendly_errors
def screen_command(
    model: Annotated[str, typer.Option("--model", help="The screening model, PROVIDER/MODEL.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The screened item file.")],
    dataset: Annotated[
        str, typer.Option("--dataset", help="A shipped subset, or a name for --path.")
    ] = "counterfact",
    path: Annotated[
        Path | None, typer.Option("--path", help="A data file instead of the shipped subset.")
    ] = None,
    data_format: Annotated[
        str | None,
        typer.Option("--format", help="The file's format: counterfact, popqa, simpleqa, items."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Screen only the first N items.")
    ] = None,
    samples: Annotated[int, typer.Option("--samples", min=1, help="Answers per question.")] = 5,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0, max=2, help="Sampling temperature.")
    ] = 0.7,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Answer length.")] = 24,
    min_correct: Annotated[float, typer.Option("--min-correct", min=0, max=1)] = 0.8,
    max_false: Annotated[float, typer.Option("--max-false", min=0, max=1)] = 0.05,
    max_both: Annotated[float, typer.Option("--max-both", min=0, max=1)] = 0.10,
    per_relation_cap: Annotated[
        int | None, typer.Option("--per-relation-cap", min=1, help="Items kept per relation.")
    ] = None,
    rates: Annotated[
        Path | None, typer.Option("--rates", help="Per-item rates CSV (default OUTPUT.rates.csv).")
    ] = None,
    cache_path: Annotated[
        Path | None, typer.Option("--cache", help="Response cache (default OUTPUT.cache.sqlite).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sampled answers.")] = 0,
) -> None:
    """Ask a model each question several times without context; keep the items it knows."""
    from pydantic import ValidationError

    from backchannel.backends import ResponseCache, build_client, check_model
    from backchannel.datasets import screen_items, write_items
    from backchannel.paradigms.peer_pressure import DatasetSource, PeerPressure, load_source

    check_model(model)
    try:
        source = DatasetSource(
            name=dataset,
            path=None if path is None else str(path),
            format=data_format,
            limit=limit,
        )
    except ValidationError as error:
        raise ConfigError(f"--dataset/--path/--format: {error.errors()[0]['msg']}") from None
    try:
        items = list(load_source(source))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    output.parent.mkdir(parents=True, exist_ok=True)
    template = PeerPressure().template("screen.txt")
    cache = ResponseCache(cache_path or output.with_name(output.name + ".cache.sqlite"))
    client = build_client([model], cache=cache)

    async def main() -> list[Any]:
        from backchannel.backends import GenerationSettings, Message, Request
        from backchannel.seeding import derive_seed

        settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens)
        requests = [
            Request(
                model=model,
                messages=(Message("user", template.format(question=item.question).strip()),),
                settings=settings,
                seed=derive_seed(seed, item.item_id, sample),
                replicate=sample,
                critical=False,
            )
            for item in items
            for sample in range(samples)
        ]
        try:
            return list(await asyncio.gather(*(client.generate(r) for r in requests)))
        finally:
            await client.aclose()

    try:
        completions = asyncio.run(main())
    finally:
        cache.close()
    answers: dict[str, list[str]] = {item.item_id: [] for item in items}
    failed = 0
    for index, completion in enumerate(completions):
        if completion.ok:
            answers[items[index // samples].item_id].append(completion.text)
        else:
            failed += 1
    result = screen_items(
        items,
        answers,
        min_correct=min_correct,
        max_false=max_false,
        max_both=max_both,
        per_relation_cap=per_relation_cap,
    )
    write_items(result.items, output)
    rates_path = rates or output.with_name(output.name + ".rates.csv")
    result.rates.to_csv(rates_path, index=False)
    if failed:
        err.print(f"{failed} of {len(completions)} calls failed; their answers were left out")
    out.print(f"kept {len(result.items)} of {len(items)} items: {output}")
    out.print(f"per-item rates: {rates_path}")
