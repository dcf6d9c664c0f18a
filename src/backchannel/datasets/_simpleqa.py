"""SimpleQA loader: OpenAI's CSV (metadata, problem, answer), plain or gzipped, or JSONL."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backchannel.datasets._false import Candidate, assign_false_answers
from backchannel.datasets._io import file_format, iter_rows, read_text, require
from backchannel.datasets._item import DatasetError, ItemSet
from backchannel.datasets._shape import infer_answer_type
from backchannel.datasets._text import clean_aliases

_HINT = "SimpleQA rows need metadata (with topic and answer_type), problem and answer"


def simpleqa_id(problem: str) -> str:
    """SimpleQA has no ids: a short hash of the question, stable across subsets and orderings."""
    return "simpleqa/" + hashlib.sha1(problem.strip().encode("utf-8")).hexdigest()[:12]


def _metadata(path: Path, where: str, value: Any) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise DatasetError(
                f"{path}: {where} field 'metadata' is not a Python/JSON dict literal; write it as "
                "{'topic': ..., 'answer_type': ...}"
            ) from None
    if not isinstance(value, Mapping):
        raise DatasetError(f"{path}: {where} field 'metadata' must be a dict; {_HINT}")
    for key in ("topic", "answer_type"):
        if not str(value.get(key) or "").strip():
            raise DatasetError(f"{path}: {where} is missing field 'metadata.{key}'; {_HINT}")
    return value


def load_simpleqa(path: str | Path, *, seed: int = 0) -> ItemSet:
    """Load SimpleQA items; false answers come from other items of the same answer type."""
    path = Path(path)
    fmt = file_format(path, (".csv", ".jsonl", ".json"))
    candidates: list[Candidate] = []
    for where, record in iter_rows(path, read_text(path), fmt):
        meta = _metadata(path, where, require(path, where, record, "metadata", _HINT))
        question = str(require(path, where, record, "problem", _HINT)).strip()
        truth = str(require(path, where, record, "answer", _HINT)).strip()
        declared = str(meta["answer_type"]).strip().lower()
        answer_type = infer_answer_type(truth, declared)
        candidates.append(
            Candidate(
                item_id=str(record.get("id") or simpleqa_id(question)),
                dataset="simpleqa",
                question=question,
                true_answer=truth,
                true_aliases=clean_aliases((truth,)),
                relation=str(meta["topic"]).strip(),
                answer_type=answer_type,
                pool=answer_type,
            )
        )
    items, dropped = assign_false_answers(candidates, seed=seed)
    return ItemSet(source=str(path), items=tuple(items), dropped=tuple(dropped))
