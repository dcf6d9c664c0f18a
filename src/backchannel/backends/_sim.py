"""Deterministic scripted backends for tests and dry runs (`sim`, `sim/<name>`).

The built-in `sim` answers instantly, seeded by the request, and always honours the request's
output constraint. Named sims answer from a registered list (in call order) or callable.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from backchannel.backends._types import (
    IntRange,
    JsonSchema,
    LabelSet,
    OutputConstraint,
    Ranking,
    RawCompletion,
    Request,
)

Responder = Callable[[Request], str]
_REGISTRY: dict[str, Responder | Sequence[str]] = {}

_WORDS = (
    "evidence source record claim answer reason sure doubt agree point view fact memory "
    "question detail report consider recall believe suggest"
).split()


def register_sim(name: str, responder: Responder | Sequence[str]) -> None:
    """Make `sim/<name>` answer with a callable of the request, or a list of texts in call order."""
    _REGISTRY[name] = responder


def unregister_sim(name: str) -> None:
    _REGISTRY.pop(name, None)


def request_digest(request: Request) -> bytes:
    """A stable hash of everything in a request that should change a scripted answer."""
    payload = json.dumps(
        [
            request.model,
            [(m.role, m.content) for m in request.messages],
            request.seed,
            request.replicate,
            request.attempt,
        ],
        separators=(",", ":"),
    )
    return hashlib.blake2b(payload.encode(), digest_size=16).digest()


def _number(digest: bytes, salt: int = 0) -> int:
    return int.from_bytes(
        hashlib.blake2b(digest + bytes([salt % 256]), digest_size=8).digest(), "big"
    )


def _value_for_schema(schema: dict[str, Any], digest: bytes, salt: int = 0) -> Any:
    if "enum" in schema:
        options = schema["enum"]
        return options[_number(digest, salt) % len(options)]
    kind = schema.get("type", "string")
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            key: _value_for_schema(sub, digest, salt + i + 1)
            for i, (key, sub) in enumerate(sorted(properties.items()))
        }
    if kind == "array":
        items = schema.get("items", {"type": "string"})
        low = schema.get("minItems", 1)
        high = schema.get("maxItems", low)
        if "enum" in items and schema.get("uniqueItems") and len(items["enum"]) >= high:
            options = list(items["enum"])
            perms = list(itertools.permutations(options, high))
            return list(perms[_number(digest, salt) % len(perms)])
        count = low + _number(digest, salt) % (high - low + 1)
        return [_value_for_schema(items, digest, salt + i + 1) for i in range(count)]
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", low + 10))
        return low + _number(digest, salt) % (high - low + 1)
    if kind == "number":
        low = float(schema.get("minimum", 0.0))
        high = float(schema.get("maximum", 1.0))
        fraction = (_number(digest, salt) % 1001) / 1000
        return round(low + (high - low) * fraction, 3)
    if kind == "boolean":
        return _number(digest, salt) % 2 == 0
    words = [_WORDS[_number(digest, salt + i) % len(_WORDS)] for i in range(4)]
    return " ".join(words)


def scripted_answer(request: Request) -> str:
    """The built-in deterministic answer: valid under the constraint, varied by the request."""
    digest = request_digest(request)
    constraint: OutputConstraint | None = request.constraint
    if isinstance(constraint, LabelSet):
        return constraint.labels[_number(digest) % len(constraint.labels)]
    if isinstance(constraint, IntRange):
        return str(constraint.low + _number(digest) % (constraint.high - constraint.low + 1))
    if isinstance(constraint, Ranking):
        perms = list(itertools.permutations(constraint.options))
        return ", ".join(perms[_number(digest) % len(perms)])
    if isinstance(constraint, JsonSchema):
        return json.dumps(_value_for_schema(constraint.schema, digest))
    words = [_WORDS[_number(digest, i) % len(_WORDS)] for i in range(12)]
    return "Sim reply: " + " ".join(words) + "."


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class SimBackend:
    """A provider with no server: scripted, instant and deterministic."""

    def __init__(self, name: str = "") -> None:
        self._name = name
        self._responder = self._resolve(name)

    @staticmethod
    def _resolve(name: str) -> Responder:
        if not name:
            return scripted_answer
        if name in _REGISTRY:
            entry = _REGISTRY[name]
            if callable(entry):
                return entry
            answers: Iterator[str] = itertools.cycle(list(entry))
            return lambda _request: next(answers)
        if ":" in name:
            module_name, _, attribute = name.partition(":")
            try:
                target = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError) as error:
                raise ValueError(
                    f"sim/{name}: cannot import {attribute!r} from {module_name!r} ({error}); "
                    "give `sim/package.module:function` naming a callable of one request"
                ) from error
            if not callable(target):
                raise ValueError(
                    f"sim/{name} is not callable; give `sim/package.module:function` naming a "
                    "callable of one request"
                )
            return target
        raise ValueError(
            f"unknown scripted backend sim/{name}; use `sim` for the built-in one, register "
            "one with backchannel.backends.register_sim (in this process only), or name "
            "`sim/package.module:function` (found in any process, the `backchannel` command's too)"
        )

    @property
    def endpoint(self) -> str:
        return "sim/" + self._name if self._name else "sim"

    async def generate(self, request: Request) -> RawCompletion:
        text = self._responder(request)
        prompt_tokens = sum(_estimate_tokens(m.content) for m in request.messages)
        return RawCompletion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=_estimate_tokens(text),
        )

    async def aclose(self) -> None:
        return None
