"""What `backchannel judge` and `agree` do with a testimony run: extract each public statement's
claims (from the markup by rule, or from a model's JSON answer) and compare two extractions."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from backchannel.errors import ConfigError
from backchannel.judges import RULE_MODEL, Agreement, LabelJob, Labelling
from backchannel.paradigms.testimony._agreement import citation_agreement
from backchannel.paradigms.testimony._extractor import (
    CLAIMS,
    CitationExtractor,
    extract_all,
    extraction_counts,
    markup_rows,
)
from backchannel.paradigms.testimony._extractor import targets as citation_targets

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.backends import LLMClient

NAME_PREFIX = "citations"
MAX_TOKENS = 1024


class CitationLabelling(Labelling):
    """Claims of public statements, stored under a judge name starting with `citations`."""

    unit = "statements"

    @property
    def kinds(self) -> tuple[str, ...]:
        return (CLAIMS,)

    def targets(self, tables: RunTables, job: LabelJob) -> list[Any]:
        if job.kind not in ("all", CLAIMS):
            raise ConfigError(
                f"--kind {job.kind}: testimony claims are extracted from public statements; "
                f"choose {CLAIMS} or all"
            )
        if not job.name.startswith(NAME_PREFIX):
            raise ConfigError(
                f"--as {job.name!r}: testimony claims are stored under a name starting "
                f"with `{NAME_PREFIX}` (e.g. citations_llm)"
            )
        chosen = citation_targets(tables)
        if job.sample is not None:
            chosen = random.Random(job.seed).sample(chosen, min(job.sample, len(chosen)))
        return chosen

    async def label(self, targets: list[Any], job: LabelJob, client: LLMClient) -> list[Any]:
        if job.judge == RULE_MODEL:
            return markup_rows(targets)
        extractor = CitationExtractor(job.judge, max_tokens=job.max_tokens or MAX_TOKENS)
        return await extract_all(extractor, client, targets)

    def summary(self, rows: Sequence[Any]) -> list[str]:
        return [f"  {status}: {count}" for status, count in extraction_counts(list(rows)).items()]

    def agreement(self, tables: RunTables, judge_a: str, judge_b: str) -> Agreement:
        found = citation_agreement(tables, judge_a, judge_b)
        return Agreement(found, [f"{name}: {value}" for name, value in found.items()])
