"""Role assignment from profiling: keyword frequency per value, best model per value."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def keyword_score(text: str, keywords: Sequence[str]) -> float:
    """Occurrences of words starting with any keyword, divided by the text's word count.

    Prefix matching counts inflections ("protect" matches "protects", "protection"). 0 for an
    empty text.
    """
    words = _WORD.findall(text.lower())
    if not words:
        return 0.0
    stems = tuple(k.lower() for k in keywords)
    return sum(word.startswith(stems) for word in words) / len(words)


def assign_models(
    scores: Mapping[str, Mapping[str, float]], models: Sequence[str]
) -> dict[str, str]:
    """For every value, the model with the highest score (ties go to the earlier pool model).

    `scores[value][model]` is that model's keyword score under that value; a missing score
    (a failed call) counts as never best.
    """
    assignment: dict[str, str] = {}
    for value, by_model in scores.items():
        ranked = [(by_model[m], -i, m) for i, m in enumerate(models) if m in by_model]
        if not ranked:
            raise ValueError(f"no model has a profiling score for value {value!r}")
        assignment[value] = max(ranked)[2]
    return assignment


def assign_distinct_models(
    scores: Mapping[str, Mapping[str, float]], models: Sequence[str]
) -> dict[str, str]:
    """Like `assign_models`, but no two values share a model while unused models remain.

    Greedy over (score, value order, pool order), best pair first; once every model is taken,
    the remaining values start over on the whole pool. Deterministic: ties go to the earlier
    value and the earlier pool model.
    """
    values = list(scores)
    pairs = sorted(
        (
            (-scores[value][model], v, m, value, model)
            for v, value in enumerate(values)
            for m, model in enumerate(models)
            if model in scores[value]
        )
    )
    assignment: dict[str, str] = {}
    while len(assignment) < len(values):
        taken: set[str] = set()
        progressed = False
        for _, _, _, value, model in pairs:
            if value in assignment or model in taken:
                continue
            assignment[value] = model
            taken.add(model)
            progressed = True
        if not progressed:
            missing = [v for v in values if v not in assignment]
            raise ValueError(f"no model has a profiling score for value {missing[0]!r}")
    return assignment
