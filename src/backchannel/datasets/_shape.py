"""Answer types and shapes: a false answer must look like the true one (year for year, ...)."""

from __future__ import annotations

import re
from typing import Final

from backchannel.datasets._text import normalize

ANSWER_TYPES: Final = ("year", "date", "number", "person", "place", "other")

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_YEAR = re.compile(r"^(c |circa )?\d{3,4}( (ad|ce|bc|bce))?$")
_NUMBER = re.compile(r"^[-+]?\d+(dot\d+)?(?: (.*))?$")
_SLASH_DATE = re.compile(r"^\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}$")
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion".split()
)


def _date_parts(norm: str) -> str | None:
    """Which of day/month/year a date-like text names ("dmy", "my", ...), or None."""
    toks = norm.split()
    has_month = any(t in _MONTHS for t in toks)
    if not has_month:
        return None
    numbers = [t for t in toks if t.isdigit()]
    # ordinals like "5th" normalise to one token "5th"
    numbers += [t[:-2] for t in toks if re.fullmatch(r"\d{1,2}(st|nd|rd|th)", t)]
    has_year = any(len(n) in (3, 4) for n in numbers)
    has_day = any(len(n) <= 2 for n in numbers)
    parts = ("d" if has_day else "") + "m" + ("y" if has_year else "")
    return parts


def infer_answer_type(answer: str, declared: str | None = None) -> str:
    """The answer type of ``answer``; a declared person/place wins, dates and numbers are detected.

    ``declared`` is a dataset's own type (SimpleQA's answer_type, a relation's known type) or None.
    """
    decl = declared.lower() if declared else None
    if decl in ("person", "place"):
        return decl
    norm = normalize(answer)
    if decl != "number" and _YEAR.match(norm):
        return "year"
    if _SLASH_DATE.match(answer.strip()) or _date_parts(norm):
        return "date"
    if _NUMBER.match(norm) or (
        decl == "number" and norm and all(t in _NUMBER_WORDS for t in norm.split())
    ):
        return "number"
    return "other"


def answer_shape(answer: str, answer_type: str) -> str:
    """A finer shape within a type: dates by which parts they name, numbers by their unit."""
    norm = normalize(answer)
    if answer_type == "date":
        if _SLASH_DATE.match(answer.strip()):
            return "date:numeric"
        return f"date:{_date_parts(norm) or '?'}"
    if answer_type == "number":
        match = _NUMBER.match(norm)
        if match is None:
            return "number:words"
        unit = match.group(2) or ""
        return f"number:{unit}"
    return answer_type
