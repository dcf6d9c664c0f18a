"""CounterFact loader: the ROME nested schema and the flattened MEND/EasyEdit schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from backchannel.datasets._false import Candidate, assign_false_answers
from backchannel.datasets._io import file_format, iter_rows, read_text, require
from backchannel.datasets._item import DatasetError, ItemSet
from backchannel.datasets._shape import infer_answer_type
from backchannel.datasets._text import clean_aliases

# Wikidata relations whose objects are places; the rest are inferred from the answer's shape.
_PLACE_RELATIONS = frozenset(
    "P17 P19 P20 P27 P30 P36 P131 P159 P190 P276 P495 P740 P937 P1376".split()
)
_PERSON_RELATIONS = frozenset("P6 P35 P50 P57 P86 P112 P162 P169 P175 P286".split())
_HINT = "CounterFact rows need case_id, prompt, subject, ground_truth and target_new"


def template_relations() -> dict[str, str]:
    """Cloze template -> Wikidata relation id, derived from ROME's known_1000.json (shipped)."""
    resource = resources.files("backchannel.datasets").joinpath(
        "data", "counterfact", "relations.json"
    )
    mapping: dict[str, str] = json.loads(resource.read_text(encoding="utf-8"))
    return mapping


def cloze_question(prompt: str) -> str:
    """CounterFact gives cloze prompts, not questions: ask for the missing completion."""
    return f"Complete the statement: {prompt.strip()} ___"


def _fields(path: Path, where: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of one record in either schema, in the flattened schema's names."""
    rewrite = record.get("requested_rewrite")
    if isinstance(rewrite, Mapping):
        subject = require(path, where, rewrite, "subject", _HINT)
        template = require(path, where, rewrite, "prompt", _HINT)
        target_new = require(path, where, rewrite, "target_new", _HINT)
        target_true = require(path, where, rewrite, "target_true", _HINT)
        for name, target in (("target_new", target_new), ("target_true", target_true)):
            if not isinstance(target, Mapping) or not str(target.get("str", "")).strip():
                raise DatasetError(
                    f"{path}: {where} is missing field 'requested_rewrite.{name}.str'; {_HINT}"
                )
        return {
            "case_id": require(path, where, record, "case_id", _HINT),
            "prompt": str(template).format(subject),
            "subject": str(subject),
            "ground_truth": str(target_true["str"]),
            "target_new": str(target_new["str"]),
            "relation_id": rewrite.get("relation_id"),
        }
    out = {
        name: require(path, where, record, name, _HINT)
        for name in ("case_id", "prompt", "subject", "ground_truth", "target_new")
    }
    out["relation_id"] = record.get("relation_id")
    return out


def load_counterfact(path: str | Path, *, relations: Mapping[str, str] | None = None) -> ItemSet:
    """Load CounterFact items; the false answer is each record's own ``target_new``.

    ``relations`` maps cloze templates ("{} plays") to relation ids; by default the shipped map
    from ROME's known facts. A template it does not cover is used as the relation itself.
    """
    path = Path(path)
    fmt = file_format(path, (".json", ".jsonl"))
    mapping = template_relations() if relations is None else relations
    candidates: list[Candidate] = []
    for where, record in iter_rows(path, read_text(path), fmt):
        fields = _fields(path, where, record)
        prompt, subject = str(fields["prompt"]).strip(), str(fields["subject"])
        template = prompt.replace(subject, "{}", 1)
        relation = fields["relation_id"] or mapping.get(template) or template
        declared = (
            "place"
            if relation in _PLACE_RELATIONS
            else "person"
            if relation in _PERSON_RELATIONS
            else None
        )
        truth = str(fields["ground_truth"]).strip()
        candidates.append(
            Candidate(
                item_id=f"counterfact/{fields['case_id']}",
                dataset="counterfact",
                question=cloze_question(prompt),
                true_answer=truth,
                true_aliases=clean_aliases((truth,)),
                relation=str(relation),
                answer_type=infer_answer_type(truth, declared),
                pool=str(relation),
                false_answer=str(fields["target_new"]).strip(),
            )
        )
    items, dropped = assign_false_answers(candidates)
    return ItemSet(source=str(path), items=tuple(items), dropped=tuple(dropped))
