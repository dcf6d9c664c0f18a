"""The smallest JSON value that satisfies a JSON schema, for structured-output replies.

Covers the schema kinds the paradigms ask for: enums, strings, integers and numbers with bounds,
booleans, arrays (an array of enum strings becomes a permutation, i.e. a ranking), objects of
those, local `$ref`s into `$defs`, and `anyOf`/`oneOf`. Anything else is rejected loudly rather
than answered with a value that might not validate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any


class UnsupportedSchemaError(ValueError):
    """The schema uses a construct the fake server cannot satisfy."""


def minimal_instance(schema: Mapping[str, Any], *, seed: int = 0) -> Any:
    """Return a small value valid under `schema`; `seed` picks the order of ranking arrays."""
    return _Builder(schema, random.Random(seed)).build(schema)


class _Builder:
    def __init__(self, root: Mapping[str, Any], rng: random.Random) -> None:
        self._root = root
        self._rng = rng

    def build(self, schema: Mapping[str, Any], depth: int = 0) -> Any:
        if depth > 32:
            raise UnsupportedSchemaError("schema nests too deeply (recursive $ref?)")
        if "$ref" in schema:
            return self.build(self._resolve(schema["$ref"]), depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            values = list(schema["enum"])
            if not values:
                raise UnsupportedSchemaError("enum with no values")
            return values[0]
        for key in ("anyOf", "oneOf", "allOf"):
            if key in schema:
                options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
                if key == "allOf" and len(options) > 1:
                    raise UnsupportedSchemaError("allOf with several schemas")
                return self.build(options[0], depth + 1)
        kind = _schema_type(schema)
        if kind == "object":
            properties = schema.get("properties", {})
            return {name: self.build(sub, depth + 1) for name, sub in properties.items()}
        if kind == "array":
            return self._array(schema, depth)
        if kind == "string":
            return "x" * max(1, int(schema.get("minLength", 1)))
        if kind == "integer":
            return _bounded_integer(schema)
        if kind == "number":
            return float(_bounded_integer(schema))
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        raise UnsupportedSchemaError(f"unsupported schema type: {kind!r}")

    def _resolve(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#/"):
            raise UnsupportedSchemaError(f"only local $ref is supported, got {ref!r}")
        node: Any = self._root
        for part in ref[2:].split("/"):
            if not isinstance(node, Mapping) or part not in node:
                raise UnsupportedSchemaError(f"unresolvable $ref {ref!r}")
            node = node[part]
        return node

    def _array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        items = schema.get("items", {})
        if "$ref" in items:
            items = self._resolve(items["$ref"])
        min_items = int(schema.get("minItems", 0))
        max_items = schema.get("maxItems")
        if "enum" in items:
            choices = list(items["enum"])
            self._rng.shuffle(choices)
            wanted = min_items if "minItems" in schema else len(choices)
            if max_items is not None:
                wanted = min(wanted, int(max_items))
            if wanted > len(choices):
                if schema.get("uniqueItems"):
                    raise UnsupportedSchemaError("more unique items required than enum values")
                return [choices[i % len(choices)] for i in range(wanted)]
            return choices[:wanted]
        if min_items and schema.get("uniqueItems"):
            raise UnsupportedSchemaError("uniqueItems arrays need enum items")
        return [self.build(items, depth + 1) for _ in range(min_items)]


def _schema_type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        return str(non_null[0] if non_null else "null")
    if kind is None:
        return "object" if "properties" in schema else "unknown"
    return str(kind)


def _bounded_integer(schema: Mapping[str, Any]) -> int:
    """The lower bound when there is one, else 0 (or the upper bound when that is negative)."""
    low = -math.inf
    high = math.inf
    if "minimum" in schema:
        low = math.ceil(schema["minimum"])
    if "exclusiveMinimum" in schema:
        low = max(low, math.floor(schema["exclusiveMinimum"]) + 1)
    if "maximum" in schema:
        high = math.floor(schema["maximum"])
    if "exclusiveMaximum" in schema:
        high = min(high, math.ceil(schema["exclusiveMaximum"]) - 1)
    if low > high:
        raise UnsupportedSchemaError("integer bounds leave no value")
    if low > -math.inf:
        return int(low)
    return 0 if high >= 0 else int(high)
