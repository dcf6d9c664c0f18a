"""`backchannel screen`: ask a model each question of a dataset several times without context,
label its answers with the rule judge, and keep the items it knows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from backchannel.cli._common import err, friendly_errors, out
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.backends import Request
    from backchannel.datasets import FactItem


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
    import asyncio

    from pydantic import ValidationError

    from backchannel.backends import PopulationBook, ResponseCache, build_client, check_model
    from backchannel.datasets import (
        SCREENING_POPULATION,
        DatasetSource,
        load_source,
        screen_items,
        write_items,
    )
    from backchannel.judges import classify_answers

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
    requests = screening_requests(
        items,
        model,
        samples=samples,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
    )
    cache = ResponseCache(cache_path or output.with_name(output.name + ".cache.sqlite"))
    rules = PopulationBook.of("screening", SCREENING_POPULATION)
    client = build_client([model], cache=cache, population_rules=rules)

    async def main() -> list[Any]:
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
        classify_answers(items, answers),
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


def screening_requests(
    items: Sequence[FactItem],
    model: str,
    *,
    samples: int,
    temperature: float,
    max_tokens: int,
    seed: int,
) -> list[Request]:
    """`samples` seeded requests per item, item by item: the calls `backchannel screen` makes.

    Each says what it asks in its call information: the screening question about an item whose
    true answer is given (what a simulated population knows, if anything)."""
    from backchannel.backends import CallInfo, GenerationSettings, Message, Request
    from backchannel.datasets import SCREEN, screening_prompt
    from backchannel.seeding import derive_seed

    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens)
    template = screening_prompt()
    return [
        Request(
            model=model,
            messages=(Message("user", template.format(question=item.question).strip()),),
            settings=settings,
            seed=derive_seed(seed, item.item_id, sample),
            replicate=sample,
            critical=False,
            call=CallInfo(
                SCREEN,
                source="screening",
                item_id=item.item_id,
                item={"question": item.question, "true_answer": item.true_answer},
            ),
        )
        for item in items
        for sample in range(samples)
    ]
