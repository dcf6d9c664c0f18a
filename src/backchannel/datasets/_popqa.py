"""PopQA loader: the original TSV/JSON schema and the reduced model_collaboration schema."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from backchannel.datasets._false import Candidate, assign_false_answers
from backchannel.datasets._io import (
    Row,
    file_format,
    iter_rows,
    parse_json,
    read_text,
    records,
    require,
    string_list,
)
from backchannel.datasets._item import DatasetError, ItemSet
from backchannel.datasets._shape import infer_answer_type
from backchannel.datasets._text import clean_aliases

# The object type of each PopQA relation.
RELATION_TYPES: dict[str, str] = {
    "occupation": "other",
    "place of birth": "place",
    "genre": "other",
    "father": "person",
    "mother": "person",
    "country": "place",
    "producer": "person",
    "director": "person",
    "screenwriter": "person",
    "composer": "person",
    "author": "person",
    "color": "other",
    "religion": "other",
    "sport": "other",
    "capital": "place",
    "capital of": "place",
}

# PopQA asks every relation with one fixed template; the reduced schema keeps only the question.
_TEMPLATES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), relation)
    for pattern, relation in (
        (r"^What is .+'s occupation\?$", "occupation"),
        (r"^In what city was .+ born\?$", "place of birth"),
        (r"^What genre is .+\?$", "genre"),
        (r"^Who is the father of .+\?$", "father"),
        (r"^Who is the mother of .+\?$", "mother"),
        (r"^In what country is .+\?$", "country"),
        (r"^Who was the producer of .+\?$", "producer"),
        (r"^Who was the director of .+\?$", "director"),
        (r"^Who was the screenwriter for .+\?$", "screenwriter"),
        (r"^Who was the composer of .+\?$", "composer"),
        (r"^Who is the author of .+\?$", "author"),
        (r"^What color is .+\?$", "color"),
        (r"^What is the religion of .+\?$", "religion"),
        (r"^What sport does .+ play\?$", "sport"),
        (r"^What is .+ the capital of\?$", "capital of"),
        (r"^What is the capital of .+\?$", "capital"),
    )
)
_HINT = "PopQA rows need id, question, prop and obj or possible_answers"


def relation_from_question(question: str) -> str | None:
    """The PopQA relation whose template ``question`` follows, or None."""
    for pattern, relation in _TEMPLATES:
        if pattern.match(question.strip()):
            return relation
    return None


def _rows(path: Path) -> Iterator[tuple[Row, bool]]:
    """Rows and whether each is in the reduced (input/output) schema."""
    fmt = file_format(path, (".json", ".jsonl", ".tsv", ".csv"))
    text = read_text(path)
    if fmt == ".json":
        data = parse_json(path, text)
        if isinstance(data, Mapping):
            splits = [s for s in ("dev", "test") if isinstance(data.get(s), list)]
            if not splits:
                raise DatasetError(
                    f"{path}: a JSON object must hold 'dev'/'test' lists of rows; "
                    "or give a JSON array of PopQA rows"
                )
            for split in splits:
                for row in records(path, data[split], split):
                    yield row, True
            return
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON array of PopQA rows")
        for row in records(path, data, ""):
            yield row, "input" in row[1] and "question" not in row[1]
        return
    for row in iter_rows(path, text, fmt):
        yield row, "input" in row[1] and "question" not in row[1]


def _candidate(path: Path, where: str, record: Mapping[str, Any], reduced: bool) -> Candidate:
    if reduced:
        hint = "reduced PopQA rows need id, input (the question) and output (the answers)"
        question = str(require(path, where, record, "input", hint)).strip()
        answers = string_list(path, where, "output", require(path, where, record, "output", hint))
        relation = relation_from_question(question)
        if relation is None:
            raise DatasetError(
                f"{path}: {where} is missing field 'prop' and its question {question!r} follows "
                "no PopQA template; add a 'prop' field"
            )
        truth = answers[0] if answers else ""
        item_id = require(path, where, record, "id", hint)
    else:
        question = str(require(path, where, record, "question", _HINT)).strip()
        relation = str(require(path, where, record, "prop", _HINT)).strip()
        answers = ()
        if record.get("possible_answers") not in (None, ""):
            answers = string_list(path, where, "possible_answers", record["possible_answers"])
        truth = str(record.get("obj") or (answers[0] if answers else "")).strip()
        item_id = require(path, where, record, "id", _HINT)
        if record.get("o_aliases") not in (None, ""):
            answers += string_list(path, where, "o_aliases", record["o_aliases"])
    if not truth:
        field = "output" if reduced else "obj"
        raise DatasetError(f"{path}: {where} is missing field {field!r}; {_HINT}")
    aliases = clean_aliases((truth, *answers))
    return Candidate(
        item_id=f"popqa/{item_id}",
        dataset="popqa",
        question=question,
        true_answer=truth,
        true_aliases=aliases,
        relation=relation,
        answer_type=infer_answer_type(truth, RELATION_TYPES.get(relation)),
        pool=relation,
    )


def load_popqa(path: str | Path, *, seed: int = 0) -> ItemSet:
    """Load PopQA items; false answers come from other items of the same relation (``prop``)."""
    path = Path(path)
    candidates = [_candidate(path, where, record, red) for (where, record), red in _rows(path)]
    items, dropped = assign_false_answers(candidates, seed=seed)
    return ItemSet(source=str(path), items=tuple(items), dropped=tuple(dropped))
