"""Output constraints: prompt hints, llama.cpp grammars, JSON schemas, and strict parsing.

Parsing reads the final answer only (the last non-empty line, or the whole text when it is a
bare answer); anything ambiguous is a parse failure, never a guess.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema

from backchannel.backends._types import IntRange, JsonSchema, LabelSet, OutputConstraint, Ranking

_MAX_ENUMERATED_INTEGERS = 1000
_MAX_ENUMERATED_RANKINGS = 720


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The parsed value, or the reason it could not be read."""

    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def format_instruction(constraint: OutputConstraint) -> str:
    """The sentence appended to a prompt so that the model knows the expected answer form."""
    return f"Reply with {constraint.describe()}, and nothing else."


def reask_instruction(constraint: OutputConstraint | None, error: str) -> str:
    """The follow-up message after an unreadable answer."""
    if constraint is None:
        return f"Your answer could not be read ({error}). Please answer again."
    return (
        f"Your answer could not be read ({error}). "
        f"Reply with {constraint.describe()}, and nothing else."
    )


def _final_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _strip_decoration(text: str) -> str:
    return text.strip().strip("*_`\"'.!:;()[]{} ").strip()


# "not true", "isn't manipulated", "never endorse", "no reject": a verdict that names a label
# only to deny it is unreadable, not that label.
_NEGATION = r"(?:\bnot|n't|\bnever|\bno)\s+"


def parse_label(text: str, constraint: LabelSet) -> ParseResult:
    by_lower = {label.lower(): label for label in constraint.labels}
    bare = _strip_decoration(text).lower()
    if bare in by_lower:
        return ParseResult(by_lower[bare])
    final = _final_line(text).lower()
    found = {
        label
        for lower, label in by_lower.items()
        if re.search(r"(?<![\w-])" + re.escape(lower) + r"(?![\w-])", final)
    }
    negated = {
        label
        for lower, label in by_lower.items()
        if re.search(_NEGATION + r"(?:\w+\s+)?" + re.escape(lower) + r"(?![\w-])", final)
    }
    if negated:
        return ParseResult(error="a negated label in the final line: " + ", ".join(sorted(negated)))
    if len(found) == 1:
        return ParseResult(found.pop())
    if not found:
        return ParseResult(error="no allowed label in the final line")
    return ParseResult(error="several labels in the final line: " + ", ".join(sorted(found)))


def parse_int(text: str, constraint: IntRange) -> ParseResult:
    bare = _strip_decoration(text)
    if re.fullmatch(r"[+-]?\d+", bare):
        number = int(bare)
    else:
        final = _final_line(text)
        final = re.sub(r"(out of|/)\s*\d+", " ", final, flags=re.IGNORECASE)
        numbers = {int(n) for n in re.findall(r"(?<![\w.])[+-]?\d+(?![\w.]|\.\d)", final)}
        if len(numbers) != 1:
            reason = "no whole number" if not numbers else "several numbers"
            return ParseResult(error=f"{reason} in the final line")
        number = numbers.pop()
    if not constraint.low <= number <= constraint.high:
        return ParseResult(error=f"{number} is outside {constraint.low}..{constraint.high}")
    return ParseResult(number)


def parse_ranking(text: str, constraint: Ranking) -> ParseResult:
    candidate = _extract_json(text)
    if isinstance(candidate, list) and all(isinstance(x, str) for x in candidate):
        names = [_match_option(x, constraint) for x in candidate]
        if None not in names and sorted(map(str, names)) == sorted(constraint.options):
            return ParseResult(list(names))
    final = _final_line(text)
    lowered = final.lower()
    positions: list[tuple[int, str]] = []
    for option in constraint.options:
        match = re.search(r"(?<![\w-])" + re.escape(option.lower()) + r"(?![\w-])", lowered)
        if match is None:
            return ParseResult(error=f"option {option!r} missing from the ranking")
        positions.append((match.start(), option))
    return ParseResult([option for _, option in sorted(positions)])


def _match_option(name: str, constraint: Ranking) -> str | None:
    lowered = name.strip().lower()
    for option in constraint.options:
        if option.lower() == lowered:
            return option
    return None


def _extract_json(text: str) -> Any:
    """The first JSON object or array in the text (code fences allowed), or None."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.DOTALL)
    body = fenced.group(1) if fenced else text
    decoder = json.JSONDecoder()
    for index, char in enumerate(body):
        if char in "[{":
            try:
                value, _ = decoder.raw_decode(body[index:])
            except json.JSONDecodeError:
                continue
            return value
    return None


def parse_json(text: str, constraint: JsonSchema) -> ParseResult:
    value = _extract_json(text)
    if value is None:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return ParseResult(error="no JSON value in the answer")
    try:
        jsonschema.validate(value, constraint.schema)
    except jsonschema.ValidationError as error:
        return ParseResult(error=f"JSON does not match the schema: {error.message}")
    return ParseResult(value)


def parse(text: str, constraint: OutputConstraint | None) -> ParseResult:
    """Parse an answer under its constraint; free text is always ok and has no parsed value."""
    if constraint is None:
        return ParseResult(None) if text.strip() else ParseResult(error="empty answer")
    if isinstance(constraint, LabelSet):
        return parse_label(text, constraint)
    if isinstance(constraint, IntRange):
        return parse_int(text, constraint)
    if isinstance(constraint, Ranking):
        return parse_ranking(text, constraint)
    return parse_json(text, constraint)


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)


def gbnf_grammar(constraint: OutputConstraint) -> str | None:
    """A llama.cpp GBNF grammar that admits exactly the valid answers, when one is small enough.

    JSON schemas are converted by llama.cpp itself (see `json_schema_for`).
    """
    if isinstance(constraint, LabelSet):
        alternatives = constraint.labels
    elif isinstance(constraint, IntRange):
        if constraint.high - constraint.low >= _MAX_ENUMERATED_INTEGERS:
            return None
        alternatives = tuple(str(n) for n in range(constraint.low, constraint.high + 1))
    elif isinstance(constraint, Ranking):
        perms = list(
            itertools.islice(
                itertools.permutations(constraint.options), _MAX_ENUMERATED_RANKINGS + 1
            )
        )
        if len(perms) > _MAX_ENUMERATED_RANKINGS:
            return None
        alternatives = tuple(", ".join(p) for p in perms)
    else:
        return None
    return "root ::= " + " | ".join(_gbnf_literal(a) for a in alternatives)


def json_schema_for(constraint: OutputConstraint) -> dict[str, Any] | None:
    """The JSON schema used for constrained decoding of a JSON-schema constraint."""
    if isinstance(constraint, JsonSchema):
        return constraint.schema
    return None
